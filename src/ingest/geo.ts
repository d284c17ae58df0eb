/** What a geo lookup knows about an IP; empty strings when unknown. */
export interface GeoInfo {
  countryCode: string;
  region: string;
  city: string;
  /** Autonomous system number of the client's network, when the platform knows it (Workers). */
  asn?: number;
}

export interface GeoLookup {
  lookup(ip: string): GeoInfo | null;
}

/** What a geo lookup knows about an IP; empty strings when unknown. */
export interface GeoInfo {
  countryCode: string;
  region: string;
  city: string;
}

export interface GeoLookup {
  lookup(ip: string): GeoInfo | null;
}

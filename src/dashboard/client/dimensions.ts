/** The filter dimensions the dashboard offers, with the words it shows for them. */

/** Every dimension of the filter menu, in menu order, with its label. */
export const DIMENSIONS: readonly (readonly [string, string])[] = [
  ['page', 'Page'],
  ['entryPage', 'Entry page'],
  ['exitPage', 'Exit page'],
  ['hostname', 'Hostname'],
  ['source', 'Source'],
  ['channel', 'Channel'],
  ['utmSource', 'UTM source'],
  ['utmMedium', 'UTM medium'],
  ['utmCampaign', 'UTM campaign'],
  ['utmTerm', 'UTM term'],
  ['utmContent', 'UTM content'],
  ['country', 'Country'],
  ['region', 'Region'],
  ['city', 'City'],
  ['browser', 'Browser'],
  ['os', 'Operating system'],
  ['device', 'Device'],
  ['event', 'Event'],
];

/** The label of a dimension; `prop:plan` → "Property plan". */
export function dimensionLabel(dimension: string): string {
  if (dimension.startsWith('prop:')) return `Property ${dimension.slice(5)}`;
  return DIMENSIONS.find(([k]) => k === dimension)?.[1] ?? dimension;
}

export const OP_LABELS = { is: 'is', is_not: 'is not', contains: 'contains' } as const;

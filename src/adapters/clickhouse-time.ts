/** ClickHouse DateTime literal (UTC, seconds) for a bound parameter of type DateTime('UTC'). */
export const toClickHouseDateTime = (ms: number) => new Date(ms).toISOString().slice(0, 19).replace('T', ' ');
/**
 * ClickHouse DateTime64(3) literal (UTC, milliseconds) for a bound parameter of type
 * DateTime64(3, 'UTC'); also the text a stored `ts` reads as, which sorts as time does.
 */
export const toClickHouseDateTime64 = (ms: number) => new Date(ms).toISOString().slice(0, 23).replace('T', ' ');
/** The instant (epoch ms) of a DateTime or DateTime64 literal in UTC (the two above, a stored `ts`); NaN for anything else. */
export const fromClickHouseDateTime = (text: unknown) => (typeof text === 'string' ? Date.parse(`${text.replace(' ', 'T')}Z`) : Number.NaN);

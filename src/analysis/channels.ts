// TEMPORARY placeholder (not committed): the filters helper writes the real module.
export const channelSql = (source: string, _a: string, _b: string, _c: string) => `if(${source} = '(direct)', 'Direct', 'Referral')`;

/**
 * One table of requests that the Node entry and the Worker must answer identically (status,
 * content type and body once ids and timestamps are masked). Run by parity.test.ts inside
 * workerd against the Worker (SELF) and the Node app (served by global-setup over the same
 * Redis and ClickHouse).
 */
export type Credential = 'write' | 'read' | 'none' | 'bad';

export interface ParityCase {
  name: string;
  method: 'GET' | 'POST' | 'PUT' | 'PATCH' | 'DELETE';
  /** `{domain}` and `{site}` are replaced with the test project's domain and id. */
  path: string;
  token: Credential;
  body?: unknown;
}

export const PARITY_TABLE: readonly ParityCase[] = [
  { name: 'health', method: 'GET', path: '/health', token: 'none' },
  { name: 'unknown route', method: 'GET', path: '/nope', token: 'none' },
  { name: 'no key', method: 'GET', path: '/api/v1/projects', token: 'none' },
  { name: 'bad key', method: 'GET', path: '/api/v1/projects', token: 'bad' },
  { name: 'project detail', method: 'GET', path: '/api/v1/projects/{domain}', token: 'read' },
  { name: 'missing project', method: 'GET', path: '/api/v1/projects/missing.example.org', token: 'read' },
  { name: 'read key writes', method: 'PATCH', path: '/api/v1/projects/{domain}', token: 'read', body: { name: 'x' } },
  { name: 'create without name', method: 'POST', path: '/api/v1/projects', token: 'write', body: { domain: 'a.example.org' } },
  { name: 'update nothing', method: 'PATCH', path: '/api/v1/projects/{domain}', token: 'write', body: { nope: 1 } },
  { name: 'delete without confirm', method: 'DELETE', path: '/api/v1/projects/{domain}', token: 'write', body: {} },
  { name: 'stats', method: 'GET', path: '/api/v1/projects/{domain}/stats?period=7d', token: 'read' },
  { name: 'timeseries', method: 'GET', path: '/api/v1/projects/{domain}/timeseries?period=24h', token: 'read' },
  { name: 'pages', method: 'GET', path: '/api/v1/projects/{domain}/pages?period=today&limit=5', token: 'read' },
  { name: 'bad period', method: 'GET', path: '/api/v1/projects/{domain}/stats?period=2y', token: 'read' },
  { name: 'bad limit', method: 'GET', path: '/api/v1/projects/{domain}/pages?limit=0', token: 'read' },
  { name: 'export', method: 'GET', path: '/api/v1/projects/{domain}/export?period=today&limit=3', token: 'read' },
  { name: 'no schedule', method: 'GET', path: '/api/v1/projects/{domain}/export/schedule', token: 'write' },
  { name: 'schedule over http', method: 'PUT', path: '/api/v1/projects/{domain}/export/schedule', token: 'write', body: { frequency: 'daily', webhookUrl: 'http://x.example' } },
  { name: 'schedule by read key', method: 'PUT', path: '/api/v1/projects/{domain}/export/schedule', token: 'read', body: { frequency: 'daily' } },
  { name: 'no export files', method: 'GET', path: '/api/v1/projects/{domain}/exports', token: 'read' },
  { name: 'export file name outside the pattern', method: 'GET', path: '/api/v1/projects/{domain}/exports/passwd', token: 'read' },
  { name: 'event with bad body', method: 'POST', path: '/api/event', token: 'none', body: 'not json' },
  { name: 'event for an unknown site', method: 'POST', path: '/api/event', token: 'none', body: { site: 'prj_unknown', kind: 'pageview', url: 'https://a.example/' } },
  { name: 'event from a foreign host', method: 'POST', path: '/api/event', token: 'none', body: { site: '{site}', kind: 'pageview', url: 'https://elsewhere.example/' } },
  { name: 'openapi', method: 'GET', path: '/openapi.json', token: 'none' },
];

/** Masks what legitimately differs between two runs: ids, timestamps, generated times. */
export function normalize(text: string): string {
  return text
    .replace(/\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d+)?Z/g, '<time>')
    .replace(/\b(prj|acct|key)_[A-Za-z0-9]+/g, '<$1>');
}

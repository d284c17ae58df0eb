export type Scope = 'read' | 'write';

/** Who is calling, set by the auth middleware. */
export interface AuthContext {
  accountId: string;
  /** `key` for API keys, `session` for dashboard sessions, `oauth` for OAuth access tokens. */
  via: 'key' | 'session' | 'oauth';
  scope: Scope;
  keyId?: string;
  /** OAuth only: the resource (RFC 8707 audience) the token was issued for. */
  audience?: string;
}

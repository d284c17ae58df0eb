export type Scope = 'read' | 'write';

/** Who is calling, set by the auth middleware. */
export interface AuthContext {
  accountId: string;
  /** `key` for API keys, `session` for dashboard sessions (and OAuth tokens later). */
  via: 'key' | 'session';
  scope: Scope;
  keyId?: string;
}

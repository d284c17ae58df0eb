import * as v from 'valibot';

/** Scopes of the service: `write` implies `read`. */
export const SCOPES = ['read', 'write'] as const;

const LOOPBACK_HOSTS = new Set(['localhost', '127.0.0.1', '[::1]']);

/** https anywhere, or http on a loopback host (native apps, RFC 8252 §7.3); never a fragment. */
export function isAllowedRedirectUri(uri: string): boolean {
  let url: URL;
  try {
    url = new URL(uri);
  } catch {
    return false;
  }
  if (url.hash || uri.includes('#')) return false;
  if (url.protocol === 'https:') return true;
  return url.protocol === 'http:' && LOOPBACK_HOSTS.has(url.hostname);
}

const RedirectUri = v.pipe(
  v.string('redirect_uris must be strings'),
  v.maxLength(2000, 'redirect_uris entries must be at most 2000 characters'),
  v.check(isAllowedRedirectUri, 'redirect_uris must be https URLs, or http URLs on localhost or 127.0.0.1, without a fragment'),
);

/** RFC 7591 registration request; unknown metadata is ignored. */
export const RegisterBody = v.object(
  {
    redirect_uris: v.pipe(
      v.array(RedirectUri, 'redirect_uris is required: a non-empty array of URLs'),
      v.minLength(1, 'redirect_uris is required: a non-empty array of URLs'),
      v.maxLength(10, 'at most 10 redirect_uris'),
    ),
    client_name: v.optional(v.pipe(v.string('client_name must be a string'), v.trim(), v.maxLength(200, 'client_name must be at most 200 characters'))),
    token_endpoint_auth_method: v.optional(v.string()),
    grant_types: v.optional(v.array(v.string())),
    response_types: v.optional(v.array(v.string())),
    scope: v.optional(v.string()),
  },
  'redirect_uris is required: a non-empty array of URLs',
);

export const RegisteredClient = v.object({
  client_id: v.string(),
  client_id_issued_at: v.number(),
  client_name: v.string(),
  redirect_uris: v.array(v.string()),
  grant_types: v.array(v.string()),
  response_types: v.array(v.string()),
  token_endpoint_auth_method: v.literal('none'),
  scope: v.string(),
});

const required = (name: string) => v.pipe(v.string(`${name} is required`), v.minLength(1, `${name} is required`), v.maxLength(2000, `${name} is too long`));

/** The parameters of an authorization request (query of GET, hidden fields of POST). */
export const AuthorizeParams = v.object({
  client_id: required('client_id'),
  redirect_uri: required('redirect_uri'),
  response_type: v.optional(v.string(), ''),
  code_challenge: v.optional(v.string(), ''),
  code_challenge_method: v.optional(v.string(), ''),
  scope: v.optional(v.string(), ''),
  state: v.optional(v.pipe(v.string(), v.maxLength(2000, 'state is too long'))),
  resource: v.optional(v.string(), ''),
});
export type AuthorizeParamsT = v.InferOutput<typeof AuthorizeParams>;

/** What the consent and login forms post besides the authorization parameters. */
export const AuthorizeForm = v.object({
  ...AuthorizeParams.entries,
  action: v.picklist(['login', 'approve', 'deny'], 'action must be one of: login, approve, deny'),
  csrf: required('csrf'),
  email: v.optional(v.pipe(v.string(), v.maxLength(320))),
  password: v.optional(v.pipe(v.string(), v.maxLength(1000))),
});

/** PKCE verifier: 43–128 characters of the unreserved set (RFC 7636 §4.1). */
const CodeVerifier = v.pipe(v.string('code_verifier is required'), v.regex(/^[A-Za-z0-9._~-]{43,128}$/, 'code_verifier must be 43 to 128 characters of [A-Za-z0-9._~-]'));

/** Token request (form-encoded), one variant per grant type. */
export const TokenForm = v.variant(
  'grant_type',
  [
    v.object({
      grant_type: v.literal('authorization_code'),
      code: required('code'),
      redirect_uri: required('redirect_uri'),
      client_id: required('client_id'),
      code_verifier: CodeVerifier,
      resource: v.optional(v.string()),
    }),
    v.object({
      grant_type: v.literal('refresh_token'),
      refresh_token: required('refresh_token'),
      client_id: required('client_id'),
      scope: v.optional(v.string()),
      resource: v.optional(v.string()),
    }),
  ],
  'grant_type must be authorization_code or refresh_token',
);

export const TokenResponse = v.object({
  access_token: v.string(),
  token_type: v.literal('Bearer'),
  expires_in: v.number(),
  refresh_token: v.string(),
  scope: v.string(),
});

export const RevokeForm = v.object({
  token: required('token'),
  client_id: required('client_id'),
  token_type_hint: v.optional(v.string()),
});

/** OAuth error body (RFC 6749 §5.2): `error` is a code, `error_description` the human text. */
export const OAuthErrorBody = v.object({ error: v.string(), error_description: v.optional(v.string()) });

export const ProtectedResourceMetadata = v.object({
  resource: v.string(),
  authorization_servers: v.array(v.string()),
  scopes_supported: v.array(v.string()),
  bearer_methods_supported: v.array(v.string()),
  resource_name: v.optional(v.string()),
});

export const AuthorizationServerMetadata = v.object({
  issuer: v.string(),
  authorization_endpoint: v.string(),
  token_endpoint: v.string(),
  registration_endpoint: v.string(),
  revocation_endpoint: v.string(),
  scopes_supported: v.array(v.string()),
  response_types_supported: v.array(v.string()),
  grant_types_supported: v.array(v.string()),
  code_challenge_methods_supported: v.array(v.string()),
  token_endpoint_auth_methods_supported: v.array(v.string()),
  revocation_endpoint_auth_methods_supported: v.array(v.string()),
  authorization_response_iss_parameter_supported: v.boolean(),
});

/** `read`, `write` or `read write` → the granted scope (write implies read); null if unknown. */
export function parseScope(text: string): 'read' | 'write' | null {
  const words = text.split(/\s+/).filter(Boolean);
  if (words.some((w) => !(SCOPES as readonly string[]).includes(w))) return null;
  return words.includes('write') ? 'write' : 'read';
}

/** The scope string given back to clients. */
export const scopeText = (scope: 'read' | 'write') => (scope === 'write' ? 'read write' : 'read');

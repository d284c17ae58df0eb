import type { Context, Env } from 'hono';
import { validator as openapiValidator } from 'hono-openapi';
import type * as v from 'valibot';
import type { ContentfulStatusCode } from 'hono/utils/http-status';
import { errorResponse } from '../errors.js';

/** An OAuth protocol error: `{ error: code, error_description }` (RFC 6749 §5.2, RFC 7591 §3.2.2). */
export class OAuthError extends Error {
  override name = 'OAuthError';
  constructor(
    readonly code: string,
    readonly description: string,
    readonly status: ContentfulStatusCode = 400,
  ) {
    super(description);
  }
}

/** Error handler of the OAuth routes: protocol errors in their own shape, the rest as usual. */
export function oauthErrorResponse(err: Error, c: Context): Response {
  if (err instanceof OAuthError) {
    c.header('Cache-Control', 'no-store');
    return c.json({ error: err.code, error_description: err.description }, err.status);
  }
  return errorResponse(c, err);
}

/**
 * A hono-openapi validator (the schema lands in /openapi.json) whose failures are OAuth
 * errors with `code` and the schema's message.
 */
export function oauthValidate<S extends v.GenericSchema, T extends 'json' | 'form' | 'query'>(target: T, schema: S, code = 'invalid_request') {
  return openapiValidator(target, schema as never, (result: { success: boolean; error?: readonly { message: string }[] }) => {
    if (!result.success) throw new OAuthError(code, result.error?.[0]?.message ?? 'Invalid request');
  }) as unknown as ReturnType<typeof openapiValidator<S, T, Env, string>>;
}

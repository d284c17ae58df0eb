import type { Context, Env } from 'hono';
import { validator as openapiValidator } from 'hono-openapi';
import type * as v from 'valibot';
import { ApiError } from '../errors.js';

type Target = 'json' | 'query' | 'param';

/**
 * A hono-openapi validator (so the schema lands in /openapi.json) whose failures become
 * `400 { error }`: the schema's own message, or `message` when given.
 */
export function validate<S extends v.GenericSchema, T extends Target>(target: T, schema: S, message?: string | ((issueMessage: string) => string)) {
  return openapiValidator(target, schema as never, (result: { success: boolean; error?: readonly { message: string }[] }, _c: Context<Env>) => {
    if (!result.success) {
      const first = result.error?.[0]?.message ?? 'Invalid input';
      const text = typeof message === 'function' ? message(first) : message ?? first;
      throw new ApiError(400, text);
    }
  }) as unknown as ReturnType<typeof openapiValidator<S, T, Env, string>>;
}

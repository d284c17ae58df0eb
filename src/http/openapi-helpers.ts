import type { DescribeRouteOptions } from 'hono-openapi';
import { resolver } from 'hono-openapi';
import * as v from 'valibot';

export const ErrorSchema = v.object({ error: v.string() });

/** A JSON response entry for `describeRoute({ responses })`. */
export const json = (description: string, schema: v.GenericSchema) => ({
  description,
  content: { 'application/json': { schema: resolver(schema) } },
});

const errorEntry = (description: string) => json(description, ErrorSchema);

/** The error responses a route can give, by status, with the contract's meaning. */
export const errors = {
  400: errorEntry('Invalid input'),
  401: errorEntry('Invalid or missing API key'),
  403: errorEntry('API key is read-only'),
  404: errorEntry('Project not found'),
  413: errorEntry('Body too large'),
  429: errorEntry('Too many requests'),
  503: errorEntry('Service temporarily unavailable'),
} as const;

type Status = keyof typeof errors;

/** Picks error responses: `errorsFor(401, 404)`. */
export const errorsFor = (...codes: Status[]) => Object.fromEntries(codes.map((c) => [c, errors[c]]));

export const bearerSecurity: DescribeRouteOptions['security'] = [{ bearerApiKey: [] }, { session: [] }];
export const sessionSecurity: DescribeRouteOptions['security'] = [{ session: [] }];

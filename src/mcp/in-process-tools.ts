import type { AnalysisEndpoint } from '../analysis/routes/endpoint.js';
import { requireProjectAccess } from '../projects/access.js';
import type { ReportDefinition } from '../reports/definition.js';
import { asQuery, domainArg, parseArgs, toolAnswer, toolError, type InProcessCall } from './in-process.js';

/**
 * The tool of an analysis endpoint: the arguments are its query (as text, like a query string)
 * or its body, plus `domain`; validated by the route's schema, then the route's own `run`.
 */
export function endpointCall(e: AnalysisEndpoint): InProcessCall {
  return async (deps, auth, args) => {
    const d = domainArg(args);
    if (!d.ok) return toolError(d.error);
    const raw = e.method === 'GET' ? asQuery(d.rest) : d.rest;
    if (typeof raw === 'string') return toolError(raw);
    const input = parseArgs(e.input, raw);
    if (!input.ok) return toolError(input.error);
    return toolAnswer(async () => e.run({ deps, project: (await requireProjectAccess(deps.redis, d.domain, auth.accountId)).project }, input.value));
  };
}

/**
 * The tool of a report: its query and path parameters validated by the report's schemas (query
 * first, as the route does), the project resolved by the route's rule (roles included), then
 * the report's `run`.
 */
export function reportCall(def: ReportDefinition, pathNames: readonly string[]): InProcessCall {
  return async (deps, auth, args) => {
    const d = domainArg(args);
    if (!d.ok) return toolError(d.error);
    const query = asQuery(d.rest);
    if (typeof query === 'string') return toolError(query);
    // The path parameters as the route validates them (`domain` included).
    const path: Record<string, string> = { domain: d.domain };
    for (const name of pathNames) {
      if (name === 'domain') continue;
      const value = query[name]?.trim();
      if (!value) return toolError(`${name} is required`);
      path[name] = value;
      delete query[name];
    }
    const parsedQuery = parseArgs(def.query, query);
    if (!parsedQuery.ok) return toolError(parsedQuery.error);
    const parsedPath = def.params ? parseArgs(def.params, path) : { ok: true as const, value: {} };
    if (!parsedPath.ok) return toolError(parsedPath.error);
    return toolAnswer(async () => {
      const access = await requireProjectAccess(deps.redis, d.domain, auth.accountId, def.roles);
      return def.run({ deps, project: access.project, role: access.role }, { ...(parsedQuery.value as object), ...(parsedPath.value as object) });
    });
  };
}

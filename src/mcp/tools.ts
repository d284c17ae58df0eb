import type * as v from 'valibot';
import type { ToolAnnotations } from '@modelcontextprotocol/sdk/types.js';
import { ExportQuery } from '../export/routes.js';
import { CreateGoalBody } from '../goals/schemas.js';
import { CreateProjectBody, UpdateProjectBody } from '../projects/schemas.js';
import { reports } from '../reports/registry.js';
import { analysisEndpoints } from '../analysis/routes/index.js';
import type { InProcessCall } from './in-process.js';
import { endpointCall, reportCall } from './in-process-tools.js';
import { toolInputSchema, type ObjectJsonSchema } from './json-schema.js';

/**
 * One MCP tool = one REST route. The tool's arguments are the route's path parameters plus its
 * query (GET) or JSON body. Reports and analysis tools have `call`: they run the route's own
 * function with the route's schemas and 404 rule, without a request through the app; the
 * others are dispatched to their route in-process. Either way the answer, the validation
 * messages and the 404 rule are the REST API's own.
 */
export interface ToolSpec {
  name: string;
  title: string;
  description: string;
  inputSchema: ObjectJsonSchema;
  annotations: ToolAnnotations;
  /** Needs write scope: listed and callable only for write credentials. */
  write: boolean;
  method: 'GET' | 'POST' | 'PATCH' | 'DELETE';
  /** REST path below /api/v1 with `:param` placeholders filled from the arguments. */
  path: string;
  /** Where the arguments that are not path parameters go. */
  argsIn: 'query' | 'body' | 'none';
  /** Runs the tool without a request through the app (see in-process.ts). */
  call?: InProcessCall;
}

const PROJECTS = '/projects';
const DOMAIN_HELP = { domain: 'Project domain as listed by list_projects, e.g. example.com' };

/** `:name` placeholders of a route path, in order. */
export const pathParams = (path: string) => [...path.matchAll(/:([A-Za-z_][A-Za-z0-9_]*)/g)].map((m) => m[1]);

const READ: ToolAnnotations = { readOnlyHint: true, openWorldHint: false };

interface Spec {
  name: string;
  title: string;
  description: string;
  method: ToolSpec['method'];
  path: string;
  schemas?: (v.GenericSchema | undefined)[];
  argsIn?: ToolSpec['argsIn'];
  annotations?: ToolAnnotations;
  /** Defaults to any method but GET; `POST query` only reads. */
  write?: boolean;
  call?: InProcessCall;
}

function tool(s: Spec): ToolSpec {
  const write = s.write ?? s.method !== 'GET';
  return {
    name: s.name,
    title: s.title,
    description: s.description,
    inputSchema: toolInputSchema(pathParams(s.path), s.schemas ?? [], DOMAIN_HELP),
    annotations: { title: s.title, ...(s.annotations ?? READ) },
    write,
    method: s.method,
    path: s.path,
    argsIn: s.argsIn ?? (s.method === 'GET' ? 'query' : 'body'),
    ...(s.call ? { call: s.call } : {}),
  };
}

/** Every tool, read tools first. Reports come from the registry: a new report is a new tool. */
export function buildTools(): ToolSpec[] {
  return [
    tool({ name: 'list_projects', title: 'List projects', description: 'Projects (websites) you can access, newest first, with your role in each.', method: 'GET', path: PROJECTS, argsIn: 'none' }),
    tool({ name: 'get_project', title: 'Project detail', description: 'Settings and install status of one project.', method: 'GET', path: `${PROJECTS}/:domain`, argsIn: 'none' }),
    ...reports.map((def) =>
      tool({
        name: `report_${def.name}`,
        title: def.summary,
        description: `${def.summary}.${def.description ? ` ${def.description}` : ''} Same answer as GET /api/v1/projects${def.path.replace(/:(\w+)/g, '{$1}')}.`,
        method: 'GET',
        path: `${PROJECTS}${def.path}`,
        schemas: [def.query, def.params],
        call: reportCall(def, pathParams(def.path)),
      }),
    ),
    ...analysisEndpoints.map((e) =>
      tool({
        name: e.name,
        title: e.summary,
        description: `${e.description} Same answer as ${e.method} /api/v1/projects${e.path.replace(/:(\w+)/g, '{$1}')}.`,
        method: e.method,
        path: `${PROJECTS}${e.path}`,
        schemas: [e.input],
        write: false,
        call: endpointCall(e),
      }),
    ),
    tool({
      name: 'export_csv',
      title: 'Export as CSV',
      description: 'The analytics of a period as CSV text: overview, pages, referrers, countries, browsers, operating systems.',
      method: 'GET',
      path: `${PROJECTS}/:domain/export`,
      schemas: [ExportQuery],
    }),
    tool({
      name: 'create_project',
      title: 'Create project',
      description: 'Add a website to track. The domain is normalized (protocol, www. and path removed).',
      method: 'POST',
      path: PROJECTS,
      schemas: [CreateProjectBody],
      annotations: { readOnlyHint: false, destructiveHint: false, idempotentHint: false, openWorldHint: false },
    }),
    tool({
      name: 'update_project',
      title: 'Update project',
      description: 'Change name, time zone, public stats, brand color or icon of a project you own.',
      method: 'PATCH',
      path: `${PROJECTS}/:domain`,
      schemas: [UpdateProjectBody],
      annotations: { readOnlyHint: false, destructiveHint: false, idempotentHint: true, openWorldHint: false },
    }),
    tool({
      name: 'create_goal',
      title: 'Create goal',
      description: 'Add a goal: type event (value = event name), pageview (value = path pattern with *), revenue (value = transaction name), traffic (value = referrer source, "" for all) or engagement (value "").',
      method: 'POST',
      path: `${PROJECTS}/:domain/goals`,
      schemas: [CreateGoalBody],
      annotations: { readOnlyHint: false, destructiveHint: false, idempotentHint: false, openWorldHint: false },
    }),
    tool({
      name: 'delete_goal',
      title: 'Delete goal',
      description: 'Remove a goal by its id (from report_goals).',
      method: 'DELETE',
      path: `${PROJECTS}/:domain/goals/:id`,
      argsIn: 'none',
      annotations: { readOnlyHint: false, destructiveHint: true, idempotentHint: true, openWorldHint: false },
    }),
  ];
}

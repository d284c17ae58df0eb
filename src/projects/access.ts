import type { Redis } from '@upstash/redis';
import type { Context } from 'hono';
import { createMiddleware } from 'hono/factory';
import type { AppEnv } from '../deps.js';
import { projectNotFound } from '../errors.js';
import { findProjectIdByDomain, getProject, getRole, type Project, type Role } from './store.js';

/** Every role: what read routes allow. */
export const EVERY_ROLE: readonly Role[] = ['owner', 'admin', 'member'];

export interface ProjectAccess {
  project: Project;
  role: Role;
}

/**
 * Loads the project named by `{domain}` for the caller. A missing project, one the caller
 * cannot see, and one where the caller's role is not in `roles` all answer the same 404.
 * The lookup runs once per request: a guard and the handler after it share the result.
 */
export async function loadProject(c: Context<AppEnv>, roles: readonly Role[] = EVERY_ROLE): Promise<ProjectAccess> {
  const domain = (c.req.param('domain') ?? '').toLowerCase();
  let access = c.get('projectAccess');
  if (access === undefined || (access && access.project.domain !== domain)) {
    access = await lookup(c, domain);
    c.set('projectAccess', access);
  }
  if (!access || !roles.includes(access.role)) throw projectNotFound();
  return access;
}

const lookup = (c: Context<AppEnv>, domain: string) => findProjectAccess(c.get('services').deps.redis, domain, c.get('auth').accountId);

/**
 * The project `domain` (lower case) with the role `accountId` holds in it, or null when the
 * project is missing or the account has no role: callers answer both with the same 404. For
 * in-process callers (MCP tools) that have no request context; loadProject uses it too.
 */
export async function findProjectAccess(redis: Redis, domain: string, accountId: string): Promise<ProjectAccess | null> {
  const id = await findProjectIdByDomain(redis, domain);
  if (!id) return null;
  const [project, role] = await Promise.all([getProject(redis, id), getRole(redis, id, accountId)]);
  return project && role ? { project, role } : null;
}

/**
 * loadProject's rule for callers outside a request (MCP tools): the project `domain` and the
 * caller's role in it, or the same 404 for a missing project, one the caller cannot see, and a
 * role not in `roles`.
 */
export async function requireProjectAccess(redis: Redis, domain: string, accountId: string, roles: readonly Role[] = EVERY_ROLE): Promise<ProjectAccess> {
  const access = await findProjectAccess(redis, domain.trim().toLowerCase(), accountId);
  if (!access || !roles.includes(access.role)) throw projectNotFound();
  return access;
}

/** Middleware: the `{domain}` project must exist and the caller hold one of `roles` (else 404). */
export const requireProject = (roles: readonly Role[]) =>
  createMiddleware<AppEnv>(async (c, next) => {
    await loadProject(c, roles);
    await next();
  });

export const MANAGERS: readonly Role[] = ['owner', 'admin'];
export const OWNER_ONLY: readonly Role[] = ['owner'];

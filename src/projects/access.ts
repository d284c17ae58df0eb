import type { Context } from 'hono';
import type { AppEnv } from '../deps.js';
import { projectNotFound } from '../errors.js';
import { findProjectIdByDomain, getProject, getRole, type Project, type Role } from './store.js';

export interface ProjectAccess {
  project: Project;
  role: Role;
}

/**
 * Loads the project named by `{domain}` for the caller. A missing project, one the caller
 * cannot see, and one where the caller's role is not in `roles` all answer the same 404.
 */
export async function loadProject(c: Context<AppEnv>, roles: readonly Role[] = ['owner', 'admin', 'member']): Promise<ProjectAccess> {
  const { redis } = c.get('services').deps;
  const domain = (c.req.param('domain') ?? '').toLowerCase();
  const id = await findProjectIdByDomain(redis, domain);
  if (!id) throw projectNotFound();
  const [project, role] = await Promise.all([getProject(redis, id), getRole(redis, id, c.get('auth').accountId)]);
  if (!project || !role || !roles.includes(role)) throw projectNotFound();
  return { project, role };
}

export const MANAGERS: readonly Role[] = ['owner', 'admin'];
export const OWNER_ONLY: readonly Role[] = ['owner'];

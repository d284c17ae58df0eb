import type { Context } from 'hono';
import type { AppEnv } from '../deps.js';
import { projectNotFound } from '../errors.js';
import { findProjectIdByDomain, getProject, type Project } from '../projects/store.js';

/**
 * The project named by `{domain}` when its public stats page is on, else null. A missing project
 * and a private one look the same to the public, as the 404 rule asks of the API.
 */
export async function findPublicProject(c: Context<AppEnv>): Promise<Project | null> {
  const { redis } = c.get('services').deps;
  const domain = (c.req.param('domain') ?? '').toLowerCase();
  const id = await findProjectIdByDomain(redis, domain);
  const project = id ? await getProject(redis, id) : null;
  return project?.publicStatsEnabled ? project : null;
}

/** As findPublicProject, throwing the project 404 (JSON) when there is none. */
export async function loadPublicProject(c: Context<AppEnv>): Promise<Project> {
  const project = await findPublicProject(c);
  if (!project) throw projectNotFound();
  return project;
}

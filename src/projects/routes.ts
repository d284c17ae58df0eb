import { Hono } from 'hono';
import { describeRoute } from 'hono-openapi';
import type { AppEnv } from '../deps.js';
import { badRequest, Messages } from '../errors.js';
import { bearerSecurity, errorsFor, json } from '../http/openapi-helpers.js';
import { validate } from '../http/validate.js';
import { requireWrite } from '../auth/middleware.js';
import { byCredential, rateLimit } from '../ratelimit.js';
import { loadProject, MANAGERS, OWNER_ONLY, requireProject } from './access.js';
import { InvalidDomainError, normalizeDomain } from './domain.js';
import { deleteProject } from './delete.js';
import {
  CreateProjectBody,
  DeleteProjectBody,
  DeleteResult,
  InstallVerified,
  ProjectDetail,
  ProjectList,
  ProjectListItem,
  ProjectUpdated,
  UpdateProjectBody,
} from './schemas.js';
import {
  createProject,
  getInstallationSeenAt,
  listProjectsFor,
  saveProject,
  type Project,
  type Role,
} from './store.js';
import { hasAnyEvent } from './install.js';

const listItem = (p: Project, role: Role) => ({
  id: p.id,
  name: p.name,
  domain: p.domain,
  timeZone: p.timeZone,
  createdAt: p.createdAt,
  accessRole: role,
  icon: p.icon,
});

/** The projects API, mounted at `/api/v1/projects`. */
export function projectRoutes() {
  const app = new Hono<AppEnv>();

  app.get(
    '/',
    describeRoute({
      tags: ['Projects'],
      summary: 'List projects the caller can access, newest first',
      security: bearerSecurity,
      responses: { 200: json('Projects', ProjectList), ...errorsFor(401, 429) },
    }),
    async (c) => {
      const { redis } = c.get('services').deps;
      const rows = await listProjectsFor(redis, c.get('auth').accountId);
      return c.json({ projects: rows.map((r) => listItem(r.project, r.role)) });
    },
  );

  app.post(
    '/',
    describeRoute({
      tags: ['Projects'],
      summary: 'Create a project',
      security: bearerSecurity,
      responses: { 201: json('The created project', ProjectListItem), ...errorsFor(400, 401, 403, 429) },
    }),
    requireWrite(),
    validate('json', CreateProjectBody),
    async (c) => {
      const body = c.req.valid('json');
      const { redis, clock } = c.get('services').deps;
      let domain: string;
      try {
        domain = normalizeDomain(body.domain);
      } catch (err) {
        if (err instanceof InvalidDomainError) throw badRequest(err.message);
        throw err;
      }
      const outcome = await createProject(
        redis,
        { name: body.name, domain, timeZone: body.timeZone, ownerId: c.get('auth').accountId },
        clock.now(),
      );
      if (!outcome.ok) {
        throw badRequest(outcome.reason === 'own' ? Messages.alreadyHaveDomain : `${domain} is already added to another account`);
      }
      return c.json(listItem(outcome.project, 'owner'), 201);
    },
  );

  app.get(
    '/:domain',
    describeRoute({
      tags: ['Projects'],
      summary: 'Project detail',
      security: bearerSecurity,
      responses: { 200: json('Project detail', ProjectDetail), ...errorsFor(401, 404, 429) },
    }),
    async (c) => {
      const { project, role } = await loadProject(c);
      const seen = await getInstallationSeenAt(c.get('services').deps.redis, project.id);
      return c.json({
        id: project.id,
        name: project.name,
        domain: project.domain,
        timeZone: project.timeZone,
        publicStatsEnabled: project.publicStatsEnabled,
        brandColor: project.brandColor,
        icon: project.icon,
        installationSeenAt: seen,
        createdAt: project.createdAt,
        isOwner: role === 'owner',
      });
    },
  );

  app.patch(
    '/:domain',
    describeRoute({
      tags: ['Projects'],
      summary: 'Update project settings (owner only)',
      security: bearerSecurity,
      responses: { 200: json('Values after the update', ProjectUpdated), ...errorsFor(400, 401, 403, 404, 429) },
    }),
    requireWrite(),
    rateLimit('patch', byCredential),
    requireProject(OWNER_ONLY),
    validate('json', UpdateProjectBody, Messages.noValidFields),
    async (c) => {
      const changes = c.req.valid('json');
      const { redis } = c.get('services').deps;
      const { project } = await loadProject(c, OWNER_ONLY);
      const updated: Project = { ...project, ...changes };
      await saveProject(redis, updated);
      return c.json({
        id: updated.id,
        name: updated.name,
        domain: updated.domain,
        timeZone: updated.timeZone,
        publicStatsEnabled: updated.publicStatsEnabled,
        installationSeenAt: await getInstallationSeenAt(redis, updated.id),
      });
    },
  );

  app.delete(
    '/:domain',
    describeRoute({
      tags: ['Projects'],
      summary: 'Delete a project with all its analytics data, its export schedule and exported files (owner only)',
      security: bearerSecurity,
      responses: { 200: json('Deleted', DeleteResult), ...errorsFor(400, 401, 403, 404, 429) },
    }),
    requireWrite(),
    requireProject(OWNER_ONLY),
    validate('json', DeleteProjectBody, Messages.confirmRequired),
    async (c) => {
      const { project } = await loadProject(c, OWNER_ONLY);
      const services = c.get('services');
      await deleteProject(services.deps, project, (id) => services.ingest.forgetProject(id));
      return c.json({ ok: true });
    },
  );

  app.post(
    '/:domain/install/verify',
    describeRoute({
      tags: ['Projects'],
      summary: 'Check whether the tracker has sent events',
      security: bearerSecurity,
      responses: { 200: json('Install status', InstallVerified), ...errorsFor(401, 403, 404, 429) },
    }),
    requireWrite(),
    requireProject(MANAGERS),
    rateLimit('verify', (c) => `project:${c.req.param('domain')?.toLowerCase()}`),
    async (c) => {
      const { redis, clickhouse } = c.get('services').deps;
      const { project } = await loadProject(c, MANAGERS);
      const seen = await getInstallationSeenAt(redis, project.id);
      const verified = seen !== null || (await hasAnyEvent(clickhouse, project.id));
      return c.json({ verified, installationSeenAt: seen });
    },
  );

  return app;
}

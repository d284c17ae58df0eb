import { Hono } from 'hono';
import { describeRoute } from 'hono-openapi';
import * as v from 'valibot';
import { requireWrite } from '../auth/middleware.js';
import { findAccountByEmail, getAccount } from '../auth/store.js';
import type { AppEnv } from '../deps.js';
import { ApiError, badRequest } from '../errors.js';
import { bearerSecurity, errorsFor, json } from '../http/openapi-helpers.js';
import { validate } from '../http/validate.js';
import { loadProject, OWNER_ONLY, requireProject } from './access.js';
import { listMembers, removeMember, setMember } from './store.js';

const EMAIL_MESSAGE = 'email must be an email address';
const Email = v.pipe(v.string(EMAIL_MESSAGE), v.trim(), v.email(EMAIL_MESSAGE), v.maxLength(254, EMAIL_MESSAGE));

/** Body of POST /members: who, and with which role (the owner role is never given away). */
export const AddMemberBody = v.object(
  { email: Email, role: v.picklist(['admin', 'member'], 'role must be one of: admin, member') },
  'Body must be a JSON object with email and role',
);
/** Body of DELETE /members. */
export const RemoveMemberBody = v.object({ email: Email }, 'Body must be a JSON object with email');

const Member = v.object({
  accountId: v.string(),
  email: v.string(),
  name: v.string(),
  role: v.picklist(['owner', 'admin', 'member']),
});
const MemberList = v.object({ members: v.array(Member) });
const OkResult = v.object({ ok: v.boolean() });

/** Messages of the member routes. */
export const MemberMessages = {
  noAccount: 'No account with that email',
  owner: 'The owner cannot be added or removed as a member',
  notMember: 'That account is not a member of this project',
} as const;

/** The owner role first (404 like a missing project for anyone else), then the body. */
const ownerOnly = requireProject(OWNER_ONLY);

/** Who can see the project, owner first, then by email. */
async function members(redis: import('@upstash/redis').Redis, projectId: string) {
  const roles = await listMembers(redis, projectId);
  const rows = await Promise.all(
    Object.entries(roles).map(async ([accountId, role]) => {
      const account = await getAccount(redis, accountId);
      return account ? { accountId, email: account.email, name: account.name, role } : null;
    }),
  );
  return rows
    .filter((r) => r !== null)
    .sort((a, b) => Number(b.role === 'owner') - Number(a.role === 'owner') || a.email.localeCompare(b.email));
}

/**
 * Project membership, mounted at /api/v1/projects: the owner lists, adds (admin or member, by
 * the email of an existing account) and removes members. Everyone else gets the project 404.
 */
export function memberRoutes() {
  const app = new Hono<AppEnv>();

  app.get(
    '/:domain/members',
    describeRoute({
      tags: ['Projects'],
      summary: 'Members of the project (owner only)',
      security: bearerSecurity,
      responses: { 200: json('Members', MemberList), ...errorsFor(401, 404, 429) },
    }),
    async (c) => {
      const { project } = await loadProject(c, OWNER_ONLY);
      return c.json({ members: await members(c.get('services').deps.redis, project.id) });
    },
  );

  app.post(
    '/:domain/members',
    describeRoute({
      tags: ['Projects'],
      summary: 'Add a member or change their role (owner only, write scope)',
      description: 'The account must exist; adding someone already a member changes their role.',
      security: bearerSecurity,
      responses: { 201: json('The member', Member), ...errorsFor(400, 401, 403, 404, 429) },
    }),
    requireWrite(),
    ownerOnly,
    validate('json', AddMemberBody),
    async (c) => {
      const { email, role } = c.req.valid('json');
      const { redis, clock } = c.get('services').deps;
      const { project } = await loadProject(c, OWNER_ONLY);
      const account = await findAccountByEmail(redis, email);
      if (!account) throw badRequest(MemberMessages.noAccount);
      if (account.id === project.ownerId) throw badRequest(MemberMessages.owner);
      await setMember(redis, project, account.id, role, clock.now());
      return c.json({ accountId: account.id, email: account.email, name: account.name, role }, 201);
    },
  );

  app.delete(
    '/:domain/members',
    describeRoute({
      tags: ['Projects'],
      summary: 'Remove a member (owner only, write scope)',
      security: bearerSecurity,
      responses: { 200: json('Removed', OkResult), ...errorsFor(400, 401, 403, 404, 429) },
    }),
    requireWrite(),
    ownerOnly,
    validate('json', RemoveMemberBody),
    async (c) => {
      const { redis } = c.get('services').deps;
      const { project } = await loadProject(c, OWNER_ONLY);
      const account = await findAccountByEmail(redis, c.req.valid('json').email);
      if (account?.id === project.ownerId) throw badRequest(MemberMessages.owner);
      if (!account || !(await removeMember(redis, project, account.id))) throw new ApiError(404, MemberMessages.notMember);
      return c.json({ ok: true });
    },
  );
  return app;
}

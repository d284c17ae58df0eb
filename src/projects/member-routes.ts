import { Hono } from 'hono';
import { describeRoute } from 'hono-openapi';
import * as v from 'valibot';
import { requireWrite } from '../auth/middleware.js';
import { findAccountByEmail, getAccount, normalizeEmail } from '../auth/store.js';
import type { AppEnv } from '../deps.js';
import { ApiError, badRequest } from '../errors.js';
import { bearerSecurity, errorsFor, json } from '../http/openapi-helpers.js';
import { validate } from '../http/validate.js';
import { loadProject, OWNER_ONLY, requireProject } from './access.js';
import { listInvitations, recordInvitation, removeInvitation } from './invitations.js';
import { listMembers, removeMember, setMember, type Role } from './store.js';

const EMAIL_MESSAGE = 'email must be an email address';
const Email = v.pipe(v.string(EMAIL_MESSAGE), v.trim(), v.email(EMAIL_MESSAGE), v.maxLength(254, EMAIL_MESSAGE));

/** Body of POST /members: who, and with which role (the owner role is never given away). */
export const AddMemberBody = v.object(
  { email: Email, role: v.picklist(['admin', 'member'], 'role must be one of: admin, member') },
  'Body must be a JSON object with email and role',
);
/** Body of DELETE /members. */
export const RemoveMemberBody = v.object({ email: Email }, 'Body must be a JSON object with email');

/**
 * A member as the owner sees it: email and role only. Name and account id would tell an
 * invitation (no account yet) from a membership (an account exists).
 */
const Member = v.object({
  email: v.string(),
  role: v.picklist(['owner', 'admin', 'member']),
});
const MemberList = v.object({ members: v.array(Member) });
const OkResult = v.object({ ok: v.boolean() });

/** Messages of the member routes. */
export const MemberMessages = {
  owner: 'The owner cannot be added or removed as a member',
  notMember: 'That account is not a member of this project',
} as const;

/** The owner role first (404 like a missing project for anyone else), then the body. */
const ownerOnly = requireProject(OWNER_ONLY);

/** Members and pending invitations alike, owner first, then by email. */
async function members(redis: import('@upstash/redis').Redis, projectId: string) {
  const [roles, invited] = await Promise.all([listMembers(redis, projectId), listInvitations(redis, projectId)]);
  const rows = await Promise.all(
    Object.entries(roles).map(async ([accountId, role]) => {
      const account = await getAccount(redis, accountId);
      return account ? { email: account.email, role } : null;
    }),
  );
  const byEmail = new Map<string, { email: string; role: Role }>(Object.entries(invited).map(([email, role]) => [email, { email, role }]));
  for (const row of rows) if (row) byEmail.set(row.email, row);
  return [...byEmail.values()].sort((a, b) => Number(b.role === 'owner') - Number(a.role === 'owner') || a.email.localeCompare(b.email));
}

/**
 * Project membership, mounted at /api/v1/projects: the owner lists, adds (admin or member, by
 * email) and removes members. Everyone else gets the project 404. Adding answers the same
 * whether or not an account has the email (src/projects/invitations.ts).
 */
export function memberRoutes() {
  const app = new Hono<AppEnv>();

  app.get(
    '/:domain/members',
    describeRoute({
      tags: ['Projects'],
      summary: 'Members of the project and pending invitations (owner only)',
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
      summary: 'Add a member by email, or change their role (owner only, write scope)',
      description:
        'Answers 202 with the same body whether or not an account has this email, so the route cannot be used to find accounts. ' +
        'An existing account gets the role at once; otherwise the invitation becomes a membership when an account with this email is created.',
      security: bearerSecurity,
      responses: { 202: json('Recorded', Member), ...errorsFor(400, 401, 403, 404, 429) },
    }),
    requireWrite(),
    ownerOnly,
    validate('json', AddMemberBody),
    async (c) => {
      const { role } = c.req.valid('json');
      const email = normalizeEmail(c.req.valid('json').email);
      const { redis, clock } = c.get('services').deps;
      const { project } = await loadProject(c, OWNER_ONLY);
      const account = await findAccountByEmail(redis, email);
      // The owner knows their own email: refusing it tells nothing about other accounts.
      if (account?.id === project.ownerId) throw badRequest(MemberMessages.owner);
      if (account) await setMember(redis, project, account.id, role, clock.now());
      else await recordInvitation(redis, project.id, email, role);
      return c.json({ email, role }, 202);
    },
  );

  app.delete(
    '/:domain/members',
    describeRoute({
      tags: ['Projects'],
      summary: 'Remove a member or withdraw an invitation (owner only, write scope)',
      security: bearerSecurity,
      responses: { 200: json('Removed', OkResult), ...errorsFor(400, 401, 403, 404, 429) },
    }),
    requireWrite(),
    ownerOnly,
    validate('json', RemoveMemberBody),
    async (c) => {
      const { redis } = c.get('services').deps;
      const { project } = await loadProject(c, OWNER_ONLY);
      const email = normalizeEmail(c.req.valid('json').email);
      const account = await findAccountByEmail(redis, email);
      if (account?.id === project.ownerId) throw badRequest(MemberMessages.owner);
      const removed = account ? await removeMember(redis, project, account.id) : false;
      const withdrawn = await removeInvitation(redis, project.id, email);
      if (!removed && !withdrawn) throw new ApiError(404, MemberMessages.notMember);
      return c.json({ ok: true });
    },
  );
  return app;
}

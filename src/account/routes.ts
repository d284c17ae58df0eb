import { Hono } from 'hono';
import { describeRoute } from 'hono-openapi';
import type { AppEnv } from '../deps.js';
import { ApiError, badRequest, unauthorized } from '../errors.js';
import { errorsFor, json, sessionSecurity } from '../http/openapi-helpers.js';
import { validate } from '../http/validate.js';
import { authenticate, bearerToken } from '../auth/middleware.js';
import { byClientIp, rateLimit } from '../ratelimit.js';
import { hashPassword, verifyPassword } from '../auth/password.js';
import { signIn } from '../auth/sign-in.js';
import {
  createApiKey,
  createSession,
  deleteAccountIdentity,
  deleteOtherSessions,
  deleteSession,
  getAccount,
  IdentityKeys,
  listApiKeys,
  normalizeEmail,
  revokeApiKey,
  saveAccount,
} from '../auth/store.js';
import { sha256Hex } from '../auth/tokens.js';
import { revokeAccountGrants } from '../oauth/store.js';
import { deleteProject } from '../projects/delete.js';
import { listProjectsFor, removeMember } from '../projects/store.js';
import {
  ApiKeyList,
  DeleteAccountBody,
  CreatedKey,
  CreateKeyBody,
  DeleteKeyBody,
  LoginBody,
  LoginResult,
  OkResult,
  Profile,
  UpdateProfileBody,
} from './schemas.js';

/** `/api/auth/*`: sign in and out with sessions. */
export function authRoutes() {
  const app = new Hono<AppEnv>();
  app.post(
    '/login',
    describeRoute({
      tags: ['Account'],
      summary: 'Sign in with email and password; returns a session token',
      responses: { 200: json('Session', LoginResult), ...errorsFor(400, 401, 429) },
    }),
    rateLimit('auth', byClientIp),
    validate('json', LoginBody),
    async (c) => {
      const { email, password } = c.req.valid('json');
      const deps = c.get('services').deps;
      const account = await signIn(deps, email, password);
      if (!account) throw new ApiError(401, 'Invalid email or password');
      return c.json(await createSession(deps.redis, account.id, deps.clock.now()));
    },
  );
  app.post(
    '/logout',
    describeRoute({
      tags: ['Account'],
      summary: 'End the current session',
      security: sessionSecurity,
      responses: { 200: json('Signed out', OkResult), ...errorsFor(401) },
    }),
    authenticate({ sessionOnly: true }),
    async (c) => {
      const token = bearerToken(c.req.header('Authorization'));
      if (token) await deleteSession(c.get('services').deps.redis, await sha256Hex(token));
      return c.json({ ok: true });
    },
  );
  return app;
}

export const AccountMessages = {
  passwordRequired: 'password is required to delete the account',
  wrongPassword: 'password is incorrect',
} as const;

const profileOf = (a: { id: string; email: string; name: string; createdAt: string }) => ({
  id: a.id,
  email: a.email,
  name: a.name,
  createdAt: a.createdAt,
});

/** `/api/account/*`: session-only dashboard routes (profile, keys, account deletion). */
export function accountRoutes() {
  const app = new Hono<AppEnv>();
  app.use('*', authenticate({ sessionOnly: true }));

  const current = async (c: import('hono').Context<AppEnv>) => {
    const account = await getAccount(c.get('services').deps.redis, c.get('auth').accountId);
    if (!account) throw unauthorized();
    return account;
  };

  app.get(
    '/profile',
    describeRoute({ tags: ['Account'], summary: 'Your profile', security: sessionSecurity, responses: { 200: json('Profile', Profile), ...errorsFor(401) } }),
    async (c) => c.json(profileOf(await current(c))),
  );

  app.patch(
    '/profile',
    describeRoute({
      tags: ['Account'],
      summary: 'Change name, email or password (password changes need currentPassword and end your other sessions)',
      security: sessionSecurity,
      responses: { 200: json('Profile', Profile), ...errorsFor(400, 401) },
    }),
    validate('json', UpdateProfileBody),
    async (c) => {
      const body = c.req.valid('json');
      const { redis } = c.get('services').deps;
      const account = await current(c);
      if (body.password !== undefined || body.email !== undefined) {
        const ok = account.passwordHash && body.currentPassword ? await verifyPassword(body.currentPassword, account.passwordHash) : !account.passwordHash;
        if (!ok) throw badRequest('currentPassword is wrong or missing');
      }
      const next = { ...account };
      if (body.name !== undefined) next.name = body.name;
      if (body.password !== undefined) next.passwordHash = await hashPassword(body.password, c.get('services').deps.passwordIterations);
      if (body.email !== undefined && normalizeEmail(body.email) !== account.email) {
        const email = normalizeEmail(body.email);
        const claimed = await redis.set(IdentityKeys.accountByEmail(email), account.id, { nx: true });
        if (claimed !== 'OK') throw badRequest('That email is already in use');
        await redis.del(IdentityKeys.accountByEmail(account.email));
        next.email = email;
      }
      await saveAccount(redis, next);
      if (body.password !== undefined) {
        // Whoever signed in with the old password is signed out; this session stays.
        const token = bearerToken(c.req.header('Authorization'));
        await deleteOtherSessions(redis, account.id, token ? await sha256Hex(token) : null);
      }
      return c.json(profileOf(next));
    },
  );

  app.delete(
    '/',
    describeRoute({
      tags: ['Account'],
      summary: 'Delete your account, its keys, sessions, OAuth grants and the projects it owns with all their data',
      description:
        'Body `{"confirm": true, "password": "…"}`: the password is required for accounts that have one. ' +
        '400 when `confirm` or the password is missing, 403 when the password is wrong.',
      security: sessionSecurity,
      responses: { 200: json('Deleted', OkResult), ...errorsFor(400, 401, 403, 429) },
    }),
    // A password check: limited like sign-ins, so a borrowed session cannot guess it.
    rateLimit('auth', byClientIp),
    validate('json', DeleteAccountBody),
    async (c) => {
      const services = c.get('services');
      const { redis } = services.deps;
      const account = await current(c);
      const { password } = c.req.valid('json');
      if (account.passwordHash) {
        if (!password) throw badRequest(AccountMessages.passwordRequired);
        if (!(await verifyPassword(password, account.passwordHash))) throw new ApiError(403, AccountMessages.wrongPassword);
      }
      for (const { project, role } of await listProjectsFor(redis, account.id)) {
        if (role === 'owner') await deleteProject(services.deps, project, (id) => services.ingest.forgetProject(id));
        else await removeMember(redis, project, account.id);
      }
      await revokeAccountGrants(redis, account.id);
      for (const hash of await deleteAccountIdentity(redis, account)) services.credentialCache.delete(hash);
      return c.json({ ok: true });
    },
  );

  app.get(
    '/keys',
    describeRoute({ tags: ['Account'], summary: 'Your API keys', security: sessionSecurity, responses: { 200: json('Keys', ApiKeyList), ...errorsFor(401) } }),
    async (c) => {
      const keys = await listApiKeys(c.get('services').deps.redis, c.get('auth').accountId);
      return c.json({ keys: keys.map(({ hash: _hash, accountId: _a, ...k }) => k) });
    },
  );

  app.post(
    '/keys',
    describeRoute({
      tags: ['Account'],
      summary: 'Create an API key; the key text is shown only in this answer',
      security: sessionSecurity,
      responses: { 201: json('The new key', CreatedKey), ...errorsFor(400, 401) },
    }),
    validate('json', CreateKeyBody),
    async (c) => {
      const body = c.req.valid('json');
      const { redis, clock } = c.get('services').deps;
      const { record, key } = await createApiKey(redis, { accountId: c.get('auth').accountId, scope: body.scope, name: body.name }, clock.now());
      const { hash: _hash, accountId: _a, ...rest } = record;
      return c.json({ ...rest, lastUsedAt: null, key }, 201);
    },
  );

  app.delete(
    '/keys',
    describeRoute({
      tags: ['Account'],
      summary: 'Delete an API key (rejected at once)',
      security: sessionSecurity,
      responses: { 200: json('Deleted', OkResult), ...errorsFor(400, 401, 404) },
    }),
    validate('json', DeleteKeyBody),
    async (c) => {
      const services = c.get('services');
      const hash = await revokeApiKey(services.deps.redis, c.req.valid('json').id, c.get('auth').accountId);
      if (!hash) throw new ApiError(404, 'API key not found');
      services.credentialCache.delete(hash);
      return c.json({ ok: true });
    },
  );
  return app;
}

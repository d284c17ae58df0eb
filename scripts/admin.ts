/**
 * Operator CLI: `npm run admin -- <command> [--flag value]…`. Prints JSON on stdout; errors go
 * to stderr with a non-zero exit. Talks to Redis only, so it works while the server runs, except
 * `vitals:history`, which works on ClickHouse (the embedded engine's store only while no server has it open).
 */
import { parseArgs } from 'node:util';
import type { Redis } from '@upstash/redis';
import { Redis as UpstashRedis } from '@upstash/redis';
import { connectRespRedis } from '../src/adapters/redis-resp.js';
import type { ClickHouseClient } from '../src/adapters/clickhouse.js';
import { connectNodeClickHouse } from '../src/adapters/node-clickhouse.js';
import { migrate } from '../src/adapters/migrate.js';
import { parseConfig, type Config } from '../src/config.js';
import { clickHouseOptions } from '../src/entry/node-deps.js';
import { createAccount, createApiKey, createSession, EmailTakenError, findAccountByEmail, revokeApiKey } from '../src/auth/store.js';
import { normalizeDomain } from '../src/projects/domain.js';
import { logError } from '../src/log.js';
import { acceptInvitations } from '../src/projects/invitations.js';
import { findProjectIdByDomain, getProject, setMember } from '../src/projects/store.js';
import { moveVitalsHistory } from '../src/reports/vitals-history.js';

class UsageError extends Error {}

const USAGE = `usage: npm run admin -- <command>
  account:create --email E [--password P] [--name N]
  key:create --email E --scope read|write [--name N]
  key:revoke --id ID
  session:create --email E
  member:add --domain D --email E --role admin|member
  vitals:history   (ClickHouse; with the embedded engine, stop the server first)`;

function need(values: Record<string, string | undefined>, ...names: string[]): void {
  const missing = names.filter((n) => !values[n]);
  if (missing.length) throw new UsageError(`missing ${missing.map((m) => `--${m}`).join(', ')}\n${USAGE}`);
}

async function accountByEmail(redis: Redis, email: string) {
  const account = await findAccountByEmail(redis, email);
  if (!account) throw new UsageError(`no account with email ${email}`);
  return account;
}

export async function runAdmin(redis: Redis, argv: string[], now = Date.now()): Promise<unknown> {
  const [command, ...rest] = argv;
  const { values } = parseArgs({
    args: rest,
    options: {
      email: { type: 'string' },
      password: { type: 'string' },
      name: { type: 'string' },
      scope: { type: 'string' },
      id: { type: 'string' },
      domain: { type: 'string' },
      role: { type: 'string' },
    },
    strict: true,
  });
  switch (command) {
    case 'account:create': {
      need(values, 'email');
      if (!/^[^\s@]+@[^\s@]+\.[^\s@]+$/.test(values.email!)) throw new UsageError('--email must be an email address');
      if (values.password !== undefined && values.password.length < 8) throw new UsageError('--password must be at least 8 characters');
      try {
        const a = await createAccount(redis, { email: values.email!, password: values.password, name: values.name }, now);
        // Members added by this email before the account existed join their projects now.
        await acceptInvitations(redis, a, now);
        return { id: a.id, email: a.email };
      } catch (err) {
        if (err instanceof EmailTakenError) throw new UsageError(err.message);
        throw err;
      }
    }
    case 'key:create': {
      need(values, 'email', 'scope');
      if (values.scope !== 'read' && values.scope !== 'write') throw new UsageError('--scope must be read or write');
      const account = await accountByEmail(redis, values.email!);
      const { record, key } = await createApiKey(redis, { accountId: account.id, scope: values.scope, name: values.name }, now);
      return { id: record.id, key, scope: record.scope };
    }
    case 'key:revoke': {
      need(values, 'id');
      if (!(await revokeApiKey(redis, values.id!))) throw new UsageError(`no key with id ${values.id}`);
      return { id: values.id, revoked: true };
    }
    case 'session:create': {
      need(values, 'email');
      const account = await accountByEmail(redis, values.email!);
      const { token } = await createSession(redis, account.id, now);
      return { token };
    }
    case 'member:add': {
      need(values, 'domain', 'email', 'role');
      if (values.role !== 'admin' && values.role !== 'member') throw new UsageError('--role must be admin or member');
      const account = await accountByEmail(redis, values.email!);
      const id = await findProjectIdByDomain(redis, normalizeDomain(values.domain!));
      const project = id ? await getProject(redis, id) : null;
      if (!project) throw new UsageError(`no project for domain ${values.domain}`);
      if (project.ownerId === account.id) throw new UsageError(`${values.email} owns ${project.domain} already`);
      await setMember(redis, project, account.id, values.role, now);
      return { domain: project.domain, email: account.email, role: values.role };
    }
    default:
      throw new UsageError(command ? `unknown command ${command}\n${USAGE}` : USAGE);
  }
}

/** The commands that work on ClickHouse rather than Redis. */
const STORE_COMMANDS: Readonly<Record<string, (clickhouse: ClickHouseClient) => Promise<unknown>>> = {
  'vitals:history': moveVitalsHistory,
};

/**
 * Runs a store command on the store the server would use (migrated first, as the server does at
 * start). The embedded engine's files are locked by the process that has them open.
 */
async function runStoreCommand(config: Config, argv: string[]): Promise<unknown> {
  const [command = '', ...rest] = argv;
  const run = STORE_COMMANDS[command]!;
  if (rest.length > 0) throw new UsageError(`${command} takes no options\n${USAGE}`);
  let store;
  try {
    store = await connectNodeClickHouse(clickHouseOptions(config));
  } catch (err) {
    // The engine prints its reason (a store another process holds is locked) and throws a bare one.
    if (config.CLICKHOUSE_URL) throw err;
    throw new Error(`cannot open the embedded ClickHouse store in ${config.DATA_DIR} (${err instanceof Error ? err.message : String(err)}): if a server has it open, stop the server first`);
  }
  try {
    await migrate(store.client, { retentionDays: config.RETENTION_DAYS });
    return await run(store.client);
  } finally {
    await store.close();
  }
}

async function main() {
  const config = parseConfig(process.env);
  const argv = process.argv.slice(2);
  if (Object.hasOwn(STORE_COMMANDS, argv[0] ?? '')) {
    console.log(JSON.stringify(await runStoreCommand(config, argv)));
    return;
  }
  let redis: Redis;
  let close = async () => {};
  if (config.UPSTASH_REDIS_REST_URL) {
    redis = new UpstashRedis({ url: config.UPSTASH_REDIS_REST_URL, token: config.UPSTASH_REDIS_REST_TOKEN ?? '' });
  } else {
    const resp = await connectRespRedis({ url: config.REDIS_URL, commandTimeoutMs: 5000 });
    redis = resp.redis;
    close = resp.close;
  }
  try {
    console.log(JSON.stringify(await runAdmin(redis, argv)));
  } finally {
    await close();
  }
}

if (import.meta.url === `file://${process.argv[1]}`) {
  main().catch((err) => {
    logError(`admin: ${err instanceof Error ? err.message : String(err)}`);
    process.exit(err instanceof UsageError ? 2 : 1);
  });
}

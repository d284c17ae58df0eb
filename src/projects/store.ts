import type { Redis } from '@upstash/redis';
import { isId, isProjectDomain, newId } from '../ids.js';

export type Role = 'owner' | 'admin' | 'member';

export interface Project {
  id: string;
  name: string;
  domain: string;
  timeZone: string;
  publicStatsEnabled: boolean;
  brandColor: string | null;
  icon: string | null;
  createdAt: string;
  ownerId: string;
}

/** Redis key names of project records. Every per-project key is listed so delete finds it. */
export const ProjectKeys = {
  project: (id: string) => `project:${id}`,
  domain: (domain: string) => `domain:${domain}`,
  members: (id: string) => `project:${id}:members`,
  /** Members added by an email that has no account yet (src/projects/invitations.ts). */
  invites: (id: string) => `project:${id}:invites`,
  /** The projects that invited an email (src/projects/invitations.ts); not per project. */
  invitesOfEmail: (email: string) => `invite:${email}`,
  installationSeen: (id: string) => `project:${id}:installed`,
  goals: (id: string) => `project:${id}:goals`,
  funnels: (id: string) => `project:${id}:funnels`,
  exportSchedule: (id: string) => `project:${id}:export-schedule`,
  /** IPs whose events are dropped (`X-Sightline-Dropped: excluded-ip`). */
  excludedIps: (id: string) => `project:${id}:excluded-ips`,
  /** Email report settings, and its recipients as a set (an unsubscribe removes one atomically). */
  emailReport: (id: string) => `project:${id}:email-report`,
  emailRecipients: (id: string) => `project:${id}:email-report:recipients`,
  /** Alerts: hash of alert id → alert, and of alert id → evaluation state. */
  alerts: (id: string) => `project:${id}:alerts`,
  alertStates: (id: string) => `project:${id}:alert-states`,
  accountProjects: (accountId: string) => `acct:${accountId}:projects`,
};

const PER_PROJECT_KEYS = [
  ProjectKeys.project,
  ProjectKeys.members,
  ProjectKeys.invites,
  ProjectKeys.installationSeen,
  ProjectKeys.goals,
  ProjectKeys.funnels,
  ProjectKeys.exportSchedule,
  ProjectKeys.excludedIps,
  ProjectKeys.emailReport,
  ProjectKeys.emailRecipients,
  ProjectKeys.alerts,
  ProjectKeys.alertStates,
];

export type CreateOutcome =
  | { ok: true; project: Project }
  | { ok: false; reason: 'own' | 'foreign' };

/**
 * Creates a project. The domain is claimed with SET NX, so of any number of concurrent creates
 * of one domain exactly one succeeds.
 */
export async function createProject(
  redis: Redis,
  input: { name: string; domain: string; timeZone: string; ownerId: string },
  now: number,
): Promise<CreateOutcome> {
  const project: Project = {
    id: newId('project'),
    name: input.name,
    domain: input.domain,
    timeZone: input.timeZone,
    publicStatsEnabled: false,
    brandColor: null,
    icon: null,
    createdAt: new Date(now).toISOString(),
    ownerId: input.ownerId,
  };
  // The record is written before the claim: a loser of the race then always finds the
  // holder's owner, and so tells "you already have it" from "another account has it".
  await saveProject(redis, project);
  const claimed = await redis.set(ProjectKeys.domain(input.domain), project.id, { nx: true });
  if (claimed !== 'OK') {
    await redis.del(ProjectKeys.project(project.id));
    const holderId = await redis.get<string>(ProjectKeys.domain(input.domain));
    const holder = holderId ? await getProject(redis, String(holderId)) : null;
    return { ok: false, reason: holder?.ownerId === input.ownerId ? 'own' : 'foreign' };
  }
  await redis
    .multi()
    .hset(ProjectKeys.members(project.id), { [input.ownerId]: 'owner' })
    .zadd(ProjectKeys.accountProjects(input.ownerId), { score: now, member: project.id })
    .exec();
  return { ok: true, project };
}

/**
 * The project with this id, or null. An id not of the project format (from a request: the
 * tracker's `site`) is unknown without a Redis call.
 */
export async function getProject(redis: Redis, id: string): Promise<Project | null> {
  if (!isId('project', id)) return null;
  const project = await redis.get<Project>(ProjectKeys.project(id));
  // Only a project record is stored under its key; anything else is not one.
  return project !== null && typeof project === 'object' && project.id === id ? project : null;
}

/** The id of the project holding `domain`; null (without a Redis call) for what is no project domain. */
export async function findProjectIdByDomain(redis: Redis, domain: string): Promise<string | null> {
  if (!isProjectDomain(domain)) return null;
  const id = await redis.get<string>(ProjectKeys.domain(domain));
  return id ? String(id) : null;
}

export async function getRole(redis: Redis, projectId: string, accountId: string): Promise<Role | null> {
  const role = await redis.hget<string>(ProjectKeys.members(projectId), accountId);
  return role === 'owner' || role === 'admin' || role === 'member' ? role : null;
}

export async function saveProject(redis: Redis, project: Project): Promise<void> {
  await redis.set(ProjectKeys.project(project.id), project);
}

/** Projects the account can access, newest first, with its role in each. */
export async function listProjectsFor(redis: Redis, accountId: string): Promise<{ project: Project; role: Role }[]> {
  const ids = (await redis.zrange<string[]>(ProjectKeys.accountProjects(accountId), 0, -1, { rev: true })).map(String);
  if (ids.length === 0) return [];
  const pipe = redis.pipeline();
  for (const id of ids) {
    pipe.get(ProjectKeys.project(id));
    pipe.hget(ProjectKeys.members(id), accountId);
  }
  const results = await pipe.exec();
  const out: { project: Project; role: Role }[] = [];
  for (let i = 0; i < ids.length; i++) {
    const project = results[2 * i] as Project | null;
    const role = results[2 * i + 1] as Role | null;
    if (project && role) out.push({ project, role });
  }
  return out.sort((a, b) => b.project.createdAt.localeCompare(a.project.createdAt) || b.project.id.localeCompare(a.project.id));
}

/** Adds or changes a member's role (never the owner's). */
export async function setMember(redis: Redis, project: Project, accountId: string, role: Exclude<Role, 'owner'>, now: number): Promise<void> {
  if (accountId === project.ownerId) throw new Error('the owner keeps the owner role');
  await redis
    .multi()
    .hset(ProjectKeys.members(project.id), { [accountId]: role })
    .zadd(ProjectKeys.accountProjects(accountId), { score: now, member: project.id })
    .exec();
}

export async function removeMember(redis: Redis, project: Project, accountId: string): Promise<boolean> {
  if (accountId === project.ownerId) return false;
  const removed = await redis.hdel(ProjectKeys.members(project.id), accountId);
  await redis.zrem(ProjectKeys.accountProjects(accountId), project.id);
  return removed > 0;
}

export async function listMembers(redis: Redis, projectId: string): Promise<Record<string, Role>> {
  return ((await redis.hgetall<Record<string, Role>>(ProjectKeys.members(projectId))) ?? {}) as Record<string, Role>;
}

/** When the tracker was first seen (ISO) or null. */
export async function getInstallationSeenAt(redis: Redis, projectId: string): Promise<string | null> {
  const v = await redis.get<string>(ProjectKeys.installationSeen(projectId));
  return v ? String(v) : null;
}

/** Records the first accepted event's time; later calls keep the first value. */
export async function markInstallationSeen(redis: Redis, projectId: string, at: number): Promise<void> {
  await redis.set(ProjectKeys.installationSeen(projectId), new Date(at).toISOString(), { nx: true });
}

/** Removes every Redis record of the project. Analytics rows are removed by the caller. */
export async function deleteProjectRecords(redis: Redis, project: Project): Promise<void> {
  const members = Object.keys(await listMembers(redis, project.id));
  const invited = Object.keys((await redis.hgetall<Record<string, string>>(ProjectKeys.invites(project.id))) ?? {});
  const tx = redis.multi();
  for (const accountId of new Set([...members, project.ownerId])) tx.zrem(ProjectKeys.accountProjects(accountId), project.id);
  for (const email of invited) tx.srem(ProjectKeys.invitesOfEmail(email), project.id);
  tx.del(...PER_PROJECT_KEYS.map((k) => k(project.id)));
  tx.eval(
    "if redis.call('GET', KEYS[1]) == ARGV[1] then return redis.call('DEL', KEYS[1]) else return 0 end",
    [ProjectKeys.domain(project.domain)],
    [project.id],
  );
  await tx.exec();
}

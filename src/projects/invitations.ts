import type { Redis } from '@upstash/redis';
import type { Account } from '../auth/store.js';
import { getProject, ProjectKeys, setMember, type Role } from './store.js';

/**
 * Memberships recorded for an email that has no account yet. Adding a member must not tell the
 * owner whether an account exists (like Plausible, which invites either way), so the route answers
 * the same for both; an invitation becomes a membership when an account with that email is
 * created (`acceptInvitations`, called by `account:create`).
 *
 * `project:{id}:invites` (hash email → role) is the owner's view; `invite:{email}` (set of project
 * ids) finds them again at account creation. Deleting the project removes both.
 */

type MemberRole = Exclude<Role, 'owner'>;

export async function recordInvitation(redis: Redis, projectId: string, email: string, role: MemberRole): Promise<void> {
  await redis.multi().hset(ProjectKeys.invites(projectId), { [email]: role }).sadd(ProjectKeys.invitesOfEmail(email), projectId).exec();
}

/** Pending invitations of a project: email → role. */
export async function listInvitations(redis: Redis, projectId: string): Promise<Record<string, MemberRole>> {
  return ((await redis.hgetall<Record<string, MemberRole>>(ProjectKeys.invites(projectId))) ?? {}) as Record<string, MemberRole>;
}

/** Withdraws an invitation; true when there was one. */
export async function removeInvitation(redis: Redis, projectId: string, email: string): Promise<boolean> {
  const [removed] = await redis.multi().hdel(ProjectKeys.invites(projectId), email).srem(ProjectKeys.invitesOfEmail(email), projectId).exec<[number, number]>();
  return removed > 0;
}

/** Turns the invitations of the account's email into memberships; returns the project ids joined. */
export async function acceptInvitations(redis: Redis, account: Account, now: number): Promise<string[]> {
  const projectIds = (await redis.smembers(ProjectKeys.invitesOfEmail(account.email))).map(String);
  const joined: string[] = [];
  for (const id of projectIds) {
    const [project, role] = await Promise.all([getProject(redis, id), redis.hget<string>(ProjectKeys.invites(id), account.email)]);
    if (project && (role === 'admin' || role === 'member') && project.ownerId !== account.id) {
      await setMember(redis, project, account.id, role, now);
      joined.push(id);
    }
    await redis.hdel(ProjectKeys.invites(id), account.email);
  }
  if (projectIds.length > 0) await redis.del(ProjectKeys.invitesOfEmail(account.email));
  return joined;
}

import { describe, expect, it } from 'vitest';
import { findProjectIdByDomain } from '../../src/projects/store.js';
import type { TestUser } from '../helpers/harness.js';
import { useHarness } from '../helpers/setup.js';

/**
 * 40 creates of one domain at once, from one account, from 40 accounts, and from two: exactly
 * one 201, every other answer the contract's 400 (its message telling "you already have it"
 * from "another account has it"), and the project listed once, by its owner only.
 */
const ctx = useHarness(['a', 'b']);
const P = '/api/v1/projects';
const N = 40;

/** Spellings that normalize to one domain (README "Decisions": scheme, www., case, trailing dot, path). */
const spellings = (domain: string) => [domain, `https://www.${domain}/`, domain.toUpperCase(), `${domain}.`, `http://${domain}:8080/path?q=1`];

async function race(domain: string, creators: TestUser[]) {
  const answers = await Promise.all(
    creators.map(async (user, i) => {
      const res = await ctx.h.call('POST', P, { token: user.writeKey, body: { name: `Race ${i}`, domain: spellings(domain)[i % 5] } });
      return { user, status: res.status, body: await res.json() };
    }),
  );
  const winners = answers.filter((a) => a.status === 201);
  expect(winners).toHaveLength(1);
  const winner = winners[0]!;
  expect(winner.body).toMatchObject({ domain, accessRole: 'owner' });
  for (const loser of answers.filter((a) => a !== winner)) {
    expect(loser.status).toBe(400);
    const message = loser.user === winner.user ? 'You already have a project for this domain' : `${domain} is already added to another account`;
    expect(loser.body).toEqual({ error: message });
  }
  // The domain points at the winner's project, which its owner sees once and nobody else sees.
  expect(await findProjectIdByDomain(ctx.h.deps.redis, domain)).toBe(winner.body.id);
  for (const user of new Set(creators)) {
    const list = (await (await ctx.h.call('GET', P, { token: user.readKey })).json()).projects as { id: string; domain: string }[];
    expect(list.filter((p) => p.domain === domain).map((p) => p.id)).toEqual(user === winner.user ? [winner.body.id] : []);
  }
  return answers;
}

describe(`${N} concurrent creates of one domain`, () => {
  it('from one account: one 201, the rest "You already have a project for this domain"', async () => {
    await race(ctx.h.domain('race-one'), Array(N).fill(ctx.a));
  });

  it(`from ${N} accounts: one 201, the rest "<domain> is already added to another account"`, async () => {
    const users = await Promise.all(Array.from({ length: N }, (_, i) => ctx.h.user(`racer${i}`)));
    await race(ctx.h.domain('race-many'), users);
  });

  it('from two accounts, interleaved: each loser gets the message for its own account', async () => {
    const answers = await race(ctx.h.domain('race-two'), Array.from({ length: N }, (_, i) => (i % 2 ? ctx.a : ctx.b)));
    // Both messages occur: the winner's own account lost 19 times, the other 20.
    const messages = new Set(answers.filter((a) => a.status === 400).map((a) => a.body.error as string));
    expect(messages.size).toBe(2);
  });
});

import { describe, expect, it } from 'vitest';
import { ID_FORMATS, isEmailKey, isId, isProjectDomain, newId, type IdKind } from '../../src/ids.js';
import { normalizeDomain } from '../../src/projects/domain.js';

const KINDS = Object.keys(ID_FORMATS) as IdKind[];

describe('record id formats', () => {
  it('every generated id is of its kind and of no other', () => {
    for (const kind of KINDS) {
      const { prefix, length } = ID_FORMATS[kind];
      for (let i = 0; i < 50; i++) {
        const id = newId(kind);
        expect(id).toMatch(new RegExp(`^${prefix}_[0-9A-Za-z]{${length}}$`));
        expect(isId(kind, id)).toBe(true);
        for (const other of KINDS) if (other !== kind) expect(isId(other, id), `${id} as ${other}`).toBe(false);
      }
    }
  });

  it('refuses what only looks like an id: key suffixes, globs, control and unicode text, other lengths', () => {
    for (const kind of KINDS) {
      const real = newId(kind);
      const bad = [
        '', `${real}:members`, `${real}:installed`, '*', `${real}*`, '..', '#seq', real.toUpperCase(), real.slice(0, -1), `${real}a`,
        ` ${real}`, `${real}\n`, `${real}\u0000`, `${real.slice(0, -1)}é`, `${real.slice(0, -2)}😀`, `${real}${'a'.repeat(10_000)}`,
        real.replace('_', '-'), real.replace('_', ':'),
      ];
      for (const value of bad) expect(isId(kind, value), `${kind} ${JSON.stringify(value).slice(0, 40)}`).toBe(false);
      for (const value of [undefined, null, 42, {}, [real]]) expect(isId(kind, value)).toBe(false);
    }
  });
});

describe('project domains', () => {
  it('accepts exactly what normalizeDomain stores', () => {
    for (const input of ['Example.com', 'https://www.shop.example.co.uk/path?q', 'bücher.example', 'a-b.c-d.example', 'xn--bcher-kva.example']) {
      expect(isProjectDomain(normalizeDomain(input)), input).toBe(true);
    }
    for (const bad of ['', 'localhost', 'example.com:members', '*', '..', 'a..b.com', 'EXAMPLE.com', 'ex ample.com', 'example.com\u0000', 'bücher.example', '-a.com', 'a.123', `${'a'.repeat(64)}.com`, `${'a.'.repeat(130)}com`]) {
      expect(isProjectDomain(bad), JSON.stringify(bad)).toBe(false);
    }
  });
});

describe('account emails as keys', () => {
  it('accepts addresses and refuses what cannot be one', () => {
    for (const ok of ['a@example.com', 'first.last+tag@sub.example.co', 'jörg@exämple.de']) expect(isEmailKey(ok), ok).toBe(true);
    for (const bad of ['', '*', 'a@b@c', 'no-at', 'a b@example.com', 'a@example.com\u0000', 'a@example.com\n', `${'a'.repeat(250)}@example.com`]) {
      expect(isEmailKey(bad), JSON.stringify(bad)).toBe(false);
    }
  });
});

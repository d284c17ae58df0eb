import { readdirSync, readFileSync } from 'node:fs';
import { join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';

/**
 * Code comments explain a decision by citing the README (or a folder's README) by section:
 * `README "Visits of closed hours"`, `README "Answer cache → Kept fresh"`, `scripts/README.md
 * "Dashboard benchmark"`. A section renamed or moved leaves such citations pointing nowhere; this
 * keeps every one of them resolvable.
 */

const root = fileURLToPath(new URL('../../', import.meta.url));
const SCANNED = ['src', 'test', 'scripts', 'sql'];
const SOURCE = /\.(ts|tsx|mjs|js|sql)$/;

function* sourceFiles(dir: string): Generator<string> {
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) {
      if (entry.name !== 'node_modules') yield* sourceFiles(path);
    } else if (SOURCE.test(entry.name) && !entry.name.endsWith('.generated.ts')) yield path;
  }
}

/** What a document can be cited by: its headings (or their first words), and each paragraph's lead. */
interface CitableNames {
  headings: string[];
  /** A paragraph's bold lead ("**Kept fresh**"), or its words before the first `:`, `.`, ` (` or ` —`. */
  leads: string[];
}

function citableNames(markdown: string): CitableNames {
  const names: CitableNames = { headings: [], leads: [] };
  let previous = '';
  for (const line of markdown.split('\n')) {
    const heading = /^#{1,6}\s+(.+)$/.exec(line);
    if (heading) names.headings.push(heading[1]!.trim());
    else if (previous.trim() === '' && line.trim() !== '') {
      const bold = /^(?:- )?\*\*(.+?)\*\*/.exec(line);
      names.leads.push(bold ? bold[1]!.replace(/[.:]$/, '') : line.replace(/^- /, '').split(/:\s|\.\s| \(| —/)[0]!);
    }
    previous = line;
  }
  return names;
}

/** Whether `cited` is a paragraph's lead, or a heading or its first words. */
function resolves(cited: string, names: CitableNames): boolean {
  return names.leads.includes(cited) || names.headings.some((h) => h === cited || (h.startsWith(cited) && /^[\s:,]/.test(h.slice(cited.length))));
}

/** Each citation in `text`: the document (`README` or a path ending in README.md) and the section path. */
function citations(text: string): { doc: string; sections: string[] }[] {
  // Comments wrap: join lines, dropping the comment markers that start them.
  const joined = text.replace(/\n\s*(?:\*(?!\/)|\/\/|--)?\s*/g, ' ');
  const found: { doc: string; sections: string[] }[] = [];
  const cite = /((?:[\w./-]+\/)?README(?:\.md)?),? ((?:"[^"]+"(?:,? (?:under )?)?)+)/g;
  for (const match of joined.matchAll(cite)) {
    for (const quoted of match[2]!.matchAll(/"([^"]+)"/g)) {
      found.push({ doc: match[1]!.replace(/^README$/, 'README.md'), sections: quoted[1]!.split(' → ') });
    }
  }
  return found;
}

describe('README citations', () => {
  it('reads headings, bold leads and paragraph leads as citable names', () => {
    const names = citableNames('# Title\n\n## Answer cache: kept\n\nKept fresh (`x`): text\nmore\n\n**Bounds on `ts`**: y\n\n- **Listed**: z\n\nHash table sizes. Text\n');
    expect(resolves('Answer cache', names)).toBe(true);
    expect(resolves('Answer', names)).toBe(true);
    expect(resolves('Answer cac', names)).toBe(false);
    expect(resolves('Kept fresh', names)).toBe(true);
    expect(resolves('Kept', names)).toBe(false);
    expect(resolves('Bounds on `ts`', names)).toBe(true);
    expect(resolves('Listed', names)).toBe(true);
    expect(resolves('Hash table sizes', names)).toBe(true);
    expect(resolves('more', names)).toBe(false);
  });

  it('finds citations across wrapped comment lines', () => {
    const text = ' * the engine (README "Where\n * the computed time goes") and scripts/README.md "Dashboard benchmark", README "A", "B" under "C"';
    expect(citations(text)).toEqual([
      { doc: 'README.md', sections: ['Where the computed time goes'] },
      { doc: 'scripts/README.md', sections: ['Dashboard benchmark'] },
      { doc: 'README.md', sections: ['A'] },
      { doc: 'README.md', sections: ['B'] },
      { doc: 'README.md', sections: ['C'] },
    ]);
  });

  it('every section the code cites exists in the document it names', () => {
    const docs = new Map<string, CitableNames>();
    const namesOf = (doc: string) => {
      let names = docs.get(doc);
      if (!names) {
        names = citableNames(readFileSync(join(root, doc), 'utf8'));
        docs.set(doc, names);
      }
      return names;
    };
    const dangling: string[] = [];
    let checked = 0;
    for (const dir of SCANNED) {
      for (const file of sourceFiles(join(root, dir))) {
        if (file.endsWith('readme-citations.test.ts')) continue;
        for (const { doc, sections } of citations(readFileSync(file, 'utf8'))) {
          checked++;
          const names = namesOf(doc);
          for (const section of sections) if (!resolves(section, names)) dangling.push(`${relative(root, file)}: ${doc} "${section}"`);
        }
      }
    }
    expect(checked).toBeGreaterThan(40);
    expect(dangling).toEqual([]);
  });
});

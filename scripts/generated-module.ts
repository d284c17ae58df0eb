import { createHash } from 'node:crypto';

/** SHA-256 of `text` in base64url: content hashes for file names and ETags. */
export const sha256 = (text: string) => createHash('sha256').update(text).digest('base64url');

/** One documented block of `export const` lines in a generated module. */
export interface ConstGroup {
  doc: string;
  /** Name → value; each value is written as its JSON literal. */
  consts: Record<string, string>;
}

/**
 * The text of a generated TypeScript module: the "do not edit" header line, then each group as a
 * JSDoc line and its constants, groups separated by blank lines; ends with a newline.
 */
export function renderConstModule(header: string, groups: ConstGroup[]): string {
  const lines = [header, ''];
  for (const group of groups) {
    lines.push(`/** ${group.doc} */`);
    for (const [name, value] of Object.entries(group.consts)) lines.push(`export const ${name} = ${JSON.stringify(value)};`);
    lines.push('');
  }
  return lines.join('\n');
}

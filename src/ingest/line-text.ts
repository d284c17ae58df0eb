import { Buffer, isAscii } from 'node:buffer';

// Keeps a line's leading U+FEFF, as decoding the whole chunk did: the line parser drops it from every line alike.
const decoder = new TextDecoder('utf-8', { ignoreBOM: true });

const NEWLINE = 0x0a;

/** `bytes` known to be ASCII as text: a Latin-1 copy, which for ASCII is the UTF-8 decoding. */
const asciiText = (bytes: Uint8Array): string => Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength).toString('latin1');

/**
 * The lines of `bytes` (UTF-8, lines ending in `\n`; the last may lack it) as text, exactly as
 * `new TextDecoder('utf-8', { ignoreBOM: true }).decode(bytes).split('\n')` gives them, the empty
 * string after a final newline included. Decoding a chunk as UTF-8 cost ~1 µs an import line of ~270
 * bytes, copying its bytes as Latin-1 ~0.1, and most import lines are ASCII, for which both give the
 * same text (README "Performance"). So an ASCII chunk is copied whole, and a chunk holding other bytes
 * line by line, decoding only its non-ASCII lines. A newline byte is never part of a multi-byte
 * sequence, so decoding line by line replaces invalid sequences exactly as decoding the whole chunk does.
 */
export function textLines(bytes: Uint8Array): string[] {
  if (isAscii(bytes)) return asciiText(bytes).split('\n');
  const lines: string[] = [];
  let start = 0;
  for (;;) {
    const newline = bytes.indexOf(NEWLINE, start);
    const line = bytes.subarray(start, newline < 0 ? bytes.byteLength : newline);
    lines.push(isAscii(line) ? asciiText(line) : decoder.decode(line));
    if (newline < 0) return lines;
    start = newline + 1;
  }
}

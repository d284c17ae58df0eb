/**
 * A UInt64 id as the two 32-bit words a hash makes, so an encoder that stores binary (RowBinary)
 * writes them as they are; everywhere else (JSON rows, comparisons, logs) it is its decimal text.
 * An import hashes two ids a line: formatting each as decimal, only for the RowBinary writer to
 * parse it back, was ~10% of the import's parsing time.
 */
export class UInt64 {
  constructor(
    /** The high 32 bits, unsigned. */
    readonly hi: number,
    /** The low 32 bits, unsigned. */
    readonly lo: number,
  ) {}

  toString(): string {
    return (BigInt(this.hi) * 4294967296n + BigInt(this.lo)).toString();
  }

  /** JSON rows carry the decimal text, as ClickHouse expects for a UInt64 column. */
  toJSON(): string {
    return this.toString();
  }
}

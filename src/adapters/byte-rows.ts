/**
 * Encoded rows gathered as bytes outside the JS heap, in a buffer that doubles as it fills. A bulk
 * import holds hundreds of thousands of rows per block: as strings they would outlive
 * young-generation collections, be copied into the old one, then joined and copied again.
 * Subclasses write rows in one format (RowBuffer: JSONEachRow, RowBinaryWriter: RowBinary).
 */
export class ByteRows {
  protected buf: Buffer;
  protected size = 0;
  /** Rows written so far. */
  rows = 0;

  constructor(initialBytes = 1 << 20) {
    // Never from the shared pool: a worker thread hands these buffers over (transfers them).
    this.buf = Buffer.allocUnsafeSlow(initialBytes);
  }

  /** Makes room for `bytes` more. */
  protected reserve(bytes: number): void {
    if (this.size + bytes <= this.buf.length) return;
    const grown = Buffer.allocUnsafeSlow(Math.max(this.buf.length * 2, this.size + bytes));
    this.buf.copy(grown, 0, 0, this.size);
    this.buf = grown;
  }

  /** Adds rows already encoded in this buffer's format (whole rows). */
  appendEncoded(bytes: Uint8Array, rows: number): void {
    this.reserve(bytes.byteLength);
    this.buf.set(bytes, this.size);
    this.size += bytes.byteLength;
    this.rows += rows;
  }

  /** Forgets what was written after the first `bytes` bytes, which held `rows` rows. */
  truncate(bytes: number, rows: number): void {
    if (bytes > this.size || rows > this.rows) throw new Error('cannot truncate beyond what was written');
    this.size = bytes;
    this.rows = rows;
  }

  /** Bytes written so far. */
  get byteLength(): number {
    return this.size;
  }

  /** The rows so far (a view, valid until the next write). */
  bytes(): Uint8Array {
    return this.buf.subarray(0, this.size);
  }
}

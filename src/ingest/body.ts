/**
 * Reads a request body up to `max` bytes. Answers null when it is larger: a declared
 * Content-Length over the limit is refused before reading, and a chunked body (no length) is read
 * as a stream and cut off as soon as it passes the limit, so an oversized upload is never held
 * in memory.
 */
export async function readLimited(req: Request, max: number): Promise<Uint8Array | null> {
  const declared = Number(req.headers.get('content-length') ?? NaN);
  if (Number.isFinite(declared)) {
    if (declared > max) return null;
    // HTTP framing caps the body at its declared length; arrayBuffer() is also @hono/node-server's
    // fast path (no web stream built), which matters at thousands of events a second.
    const whole = new Uint8Array(await req.arrayBuffer());
    return whole.byteLength > max ? null : whole;
  }
  if (!req.body) return new Uint8Array(0);
  const reader = req.body.getReader();
  const chunks: Uint8Array[] = [];
  let size = 0;
  for (;;) {
    const { done, value } = await reader.read();
    if (done) break;
    size += value.byteLength;
    if (size > max) {
      await reader.cancel().catch(() => {});
      return null;
    }
    chunks.push(value);
  }
  if (chunks.length === 1) return chunks[0];
  const out = new Uint8Array(size);
  let offset = 0;
  for (const chunk of chunks) {
    out.set(chunk, offset);
    offset += chunk.byteLength;
  }
  return out;
}

import { createServer, type IncomingMessage, type RequestListener, type Server, type ServerResponse } from 'node:http';
import { getRequestListener } from '@hono/node-server';
import { errorPayload } from '../errors.js';
import type { Services } from '../services.js';
import { eventTooLarge, MAX_EVENT_BYTES, recordEvent } from './record-event.js';

/** The client closed the connection before its body was read. */
class ClientGoneError extends Error {}

const isEventPost = (req: IncomingMessage) =>
  req.method === 'POST' && (req.url === '/api/event' || req.url?.startsWith('/api/event?') === true);

/** The body, or null past `max` bytes (a declared length over it is refused before reading, a chunked body as soon as it passes). */
function readBody(req: IncomingMessage, max: number): Promise<Buffer | null> {
  if (Number(req.headers['content-length']) > max) return Promise.resolve(null);
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
    req.on('data', (chunk: Buffer) => {
      size += chunk.byteLength;
      if (size > max) {
        // Stop reading: the 413 says `Connection: close`, so Node closes the socket once it is
        // out instead of taking in the rest of the upload.
        req.removeAllListeners('data');
        req.pause();
        resolve(null);
      } else chunks.push(chunk);
    });
    req.on('end', () => resolve(chunks.length === 1 ? chunks[0]! : Buffer.concat(chunks, size)));
    req.on('error', reject);
    // A client gone mid-body: nothing to answer. ('close' also follows every complete body.)
    req.on('close', () => {
      if (!req.complete) reject(new ClientGoneError());
    });
  });
}

/**
 * Serves `POST /api/event` from Node's own request and response, and hands every other request to
 * `next` (the Hono app). Events are the one hot path of the service: at thousands a second,
 * building web Request and Response objects and routing them took about a fifth of its CPU. The
 * answers are the Hono route's (test/integration/ingest-fast-path.test.ts compares them).
 */
export function withEventFastPath(services: Services, next: RequestListener): RequestListener {
  return (req, res) => {
    if (!isEventPost(req)) return next(req, res);
    void serveEvent(services, req, res);
  };
}

async function serveEvent(services: Services, req: IncomingMessage, res: ServerResponse): Promise<void> {
  try {
    const body = await readBody(req, MAX_EVENT_BYTES);
    if (!body) throw eventTooLarge();
    const dropped = await recordEvent(services, {
      body,
      header: (name) => {
        const value = req.headers[name];
        return Array.isArray(value) ? value.join(', ') : value;
      },
      onCloudflare: false,
      peerAddress: () => req.socket.remoteAddress ?? '',
    });
    res.writeHead(202, dropped ? { 'Access-Control-Allow-Origin': '*', 'X-Sightline-Dropped': dropped } : { 'Access-Control-Allow-Origin': '*' });
    res.end();
  } catch (err) {
    if (err instanceof ClientGoneError || res.destroyed) return;
    const { status, headers, body } = errorPayload(err);
    const json = JSON.stringify(body);
    if (!res.headersSent) {
      res.writeHead(status, { 'Access-Control-Allow-Origin': '*', 'Content-Type': 'application/json', 'Content-Length': Buffer.byteLength(json), ...headers });
    }
    res.end(json);
  }
}

/** A Node HTTP server for the app (`fetch`), with the event fast path sharing the app's services. */
export function createNodeServer(fetch: (request: Request) => Response | Promise<Response>, services: Services): Server {
  return createServer(withEventFastPath(services, getRequestListener(fetch)));
}

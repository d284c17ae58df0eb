/**
 * A ClickHouse HTTP interface over the embedded engine, for `wrangler dev` and the workerd tests
 * (no ClickHouse server exists on these machines). Enough of the protocol for
 * `@clickhouse/client-web`: query in the body or `query=`, `param_*`, `default_format`, settings
 * as URL parameters, inserts with data in the body, errors as HTTP 500 with
 * `X-ClickHouse-Exception-Code`.
 */
import { createServer } from 'node:http';
import { Readable } from 'node:stream';
import { randomUUID } from 'node:crypto';
import type { ClickHouseClient } from '../../src/adapters/clickhouse.js';
import { listenBridge, readBody, type RunningBridge } from './listen.js';

/** URL parameters that are protocol, not settings. */
const PROTOCOL_PARAMS = new Set(['query', 'query_id', 'database', 'default_format', 'session_id', 'session_timeout', 'user', 'password', 'compress', 'decompress']);
/** Settings that only mean something to a real HTTP server. */
const HTTP_ONLY = /^(enable_http_compression|http_|send_progress_in_http_headers|wait_end_of_query|cancel_http_readonly_queries_on_client_close)/;

export interface BridgeOptions {
  clickhouse: ClickHouseClient;
  port?: number;
  host?: string;
}

/** Starts the bridge; resolves with its URL and a close function. */
export function startClickHouseBridge(opts: BridgeOptions): Promise<RunningBridge> {
  const server = createServer(async (req, res) => {
    const url = new URL(req.url ?? '/', 'http://bridge');
    if (url.pathname === '/ping') {
      res.writeHead(200, { 'Content-Type': 'text/plain' }).end('Ok.\n');
      return;
    }
    const queryId = url.searchParams.get('query_id') ?? randomUUID();
    try {
      const body = await readBody(req);
      const inUrl = url.searchParams.get('query');
      const isInsert = inUrl !== null && body.length > 0;
      const query = isInsert ? inUrl : body || inUrl || '';
      const query_params: Record<string, string> = {};
      const clickhouse_settings: Record<string, string> = {};
      for (const [k, v] of url.searchParams) {
        if (k.startsWith('param_')) query_params[k.slice(6)] = v;
        else if (!PROTOCOL_PARAMS.has(k) && !HTTP_ONLY.test(k)) clickhouse_settings[k] = v;
      }
      const format = url.searchParams.get('default_format');
      if (format) clickhouse_settings.default_format = format;
      const result = await opts.clickhouse.exec({
        query,
        query_params,
        clickhouse_settings: clickhouse_settings as never,
        ...(isInsert ? { values: Readable.from([body]) as never } : {}),
      });
      res.writeHead(200, {
        'Content-Type': 'text/plain; charset=UTF-8',
        'X-ClickHouse-Query-Id': queryId,
        'X-ClickHouse-Summary': JSON.stringify(result.summary ?? {}),
      });
      for await (const chunk of result.stream as AsyncIterable<Buffer>) res.write(chunk);
      res.end();
    } catch (err) {
      const e = err as { code?: string | number; clickhouseCode?: number; type?: string; message?: string };
      const code = String(e.clickhouseCode ?? (typeof e.code === 'string' && /^\d+$/.test(e.code) ? e.code : 1000));
      // The server's format, `(TYPE)` included: clients parse code and type out of it.
      const type = /^[A-Z0-9_]*[A-Z]{3}[A-Z0-9_]*$/.test(e.type ?? '') ? e.type : 'UNKNOWN_EXCEPTION';
      res
        .writeHead(500, { 'Content-Type': 'text/plain; charset=UTF-8', 'X-ClickHouse-Exception-Code': code, 'X-ClickHouse-Query-Id': queryId })
        .end(`Code: ${code}. DB::Exception: ${e.message ?? String(err)}. (${type}) (version chdb)\n`);
    }
  });
  return listenBridge(server, opts);
}

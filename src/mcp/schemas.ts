import * as v from 'valibot';

const Id = v.union([v.string(), v.number(), v.null()]);

/** A JSON-RPC 2.0 request or notification as MCP sends it (e.g. initialize, tools/list, tools/call). */
export const JsonRpcRequest = v.object({
  jsonrpc: v.literal('2.0'),
  id: v.optional(v.union([v.string(), v.number()])),
  method: v.string(),
  params: v.optional(v.record(v.string(), v.unknown())),
});

/** A JSON-RPC 2.0 response: `result` on success, `error` on a protocol error. */
export const JsonRpcResponse = v.union([
  v.object({ jsonrpc: v.literal('2.0'), id: Id, result: v.record(v.string(), v.unknown()) }),
  v.object({
    jsonrpc: v.literal('2.0'),
    id: Id,
    error: v.object({ code: v.number(), message: v.string(), data: v.optional(v.unknown()) }),
  }),
]);

/** Body of POST /mcp: one message or a batch. */
export const JsonRpcBody = v.union([JsonRpcRequest, v.array(JsonRpcRequest)]);

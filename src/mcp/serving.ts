/**
 * `freecode-tools/mcp`: serving a built tool system over MCP. Its own entry, apart from the
 * library's (src/index.ts), because it loads the MCP SDK's server side (zod, ajv, hono: about a
 * third of the package's modules), which an embedder that never serves should not pay for.
 */
export type { OAuthIntrospectionClient, OAuthResourceAuth } from "./auth/verify.ts"
export { type HttpAuth, MAX_REQUEST_BYTES } from "./http-guard.ts"
export { makeToolServer } from "./tool-server.ts"
export type { ServedSystem } from "./tool-wire.ts"
export { type HttpOptions, type HttpServing, serveHttp, serveStdio } from "./transports.ts"

/**
 * `mcp --http --auth oauth` as an OAuth 2.1 resource server, at the HTTP door: it publishes its
 * protected resource metadata (RFC 9728), so a client that is refused learns where to log in,
 * and answers a request without a good token 401 (or 403 for a missing scope) with a
 * WWW-Authenticate header that points at that metadata. The token checks are in verify.ts.
 */
import type * as NodeHttp from "node:http"
import { metadataUrlOf, PROTECTED_RESOURCE_PREFIX } from "./metadata-url.ts"
import { makeTokenVerifier, type OAuthResourceAuth, type Verdict } from "./verify.ts"

/** The protected resource metadata document. */
export const resourceMetadata = (config: OAuthResourceAuth, resource: string) => ({
  resource,
  authorization_servers: [config.issuer],
  ...(config.scopes !== undefined && config.scopes.length > 0 ? { scopes_supported: [...config.scopes] } : {}),
  bearer_methods_supported: ["header"],
  resource_name: "freecode-tools"
})

/** A quoted-string parameter value (RFC 9110): backslash and quote escaped, nothing else kept but printable ASCII. */
const quoted = (s: string) => `"${s.replace(/[^\x20-\x7e]/g, "?").replace(/["\\]/g, "\\$&")}"`

/** The WWW-Authenticate header for a refusal. */
export const challenge = (verdict: Verdict & { ok: false }, metadataUrl: string, scopes: ReadonlyArray<string>) => {
  const params = [`resource_metadata=${quoted(metadataUrl)}`]
  if ("error" in verdict && verdict.error !== undefined) {
    params.push(`error=${quoted(verdict.error)}`, `error_description=${quoted(verdict.description)}`)
  }
  if (scopes.length > 0) params.push(`scope=${quoted(scopes.join(" "))}`)
  return `Bearer ${params.join(", ")}`
}

export interface ResourceGate {
  /** This server's resource identifier. */
  readonly resource: string
  readonly metadataUrl: string
  /**
   * Answers the request when it is for the metadata, or lacks a good token ("answered"); else
   * "pass" and the request goes on.
   */
  readonly handle: (req: NodeHttp.IncomingMessage, res: NodeHttp.ServerResponse) => Promise<"answered" | "pass">
}

const bearer = (req: NodeHttp.IncomingMessage): string | undefined => {
  const header = req.headers.authorization
  const match = typeof header === "string" ? header.match(/^Bearer[ \t]+(\S+)[ \t]*$/i) : null
  return match === null ? undefined : match[1]
}

/** The gate for a server whose /mcp endpoint is `servedUrl` (the resource, unless `config.audience` names another). */
export const makeResourceGate = (config: OAuthResourceAuth, servedUrl: string): ResourceGate => {
  const resource = config.audience ?? servedUrl
  const metadataUrl = metadataUrlOf(resource)
  const metadataPaths = new Set([metadataUrl.pathname, PROTECTED_RESOURCE_PREFIX])
  const document = JSON.stringify(resourceMetadata(config, resource))
  const verifier = makeTokenVerifier(config, resource)
  const scopes = config.scopes ?? []
  return {
    resource,
    metadataUrl: metadataUrl.href,
    handle: async (req, res) => {
      const path = new URL(req.url ?? "/", "http://localhost").pathname
      if (metadataPaths.has(path)) {
        if (req.method !== "GET" && req.method !== "HEAD") {
          res.writeHead(405, { allow: "GET, HEAD" }).end()
          return "answered"
        }
        res.writeHead(200, { "content-type": "application/json", "cache-control": "max-age=300" })
        res.end(req.method === "HEAD" ? undefined : document)
        return "answered"
      }
      const verdict = await verifier.verify(bearer(req))
      if (verdict.ok) return "pass"
      const code = verdict.status === 503 ? -32603 : -32001
      const label = verdict.status === 401 ? "Unauthorized" : verdict.status === 403 ? "Forbidden" : "Unavailable"
      const headers: Record<string, string> = { "content-type": "application/json" }
      if (verdict.status !== 503) headers["www-authenticate"] = challenge(verdict, metadataUrl.href, scopes)
      if (!res.headersSent) {
        res.writeHead(verdict.status, headers)
        res.end(
          JSON.stringify({ jsonrpc: "2.0", error: { code, message: `${label}: ${verdict.description}` }, id: null })
        )
      }
      return "answered"
    }
  }
}

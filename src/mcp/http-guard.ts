/**
 * What `mcp --http` checks before it reads a request: who may call (a bearer token, compared in
 * constant time) and how much a request may carry (the body is capped before it is read, so one
 * large POST cannot grow the server by its size, or several of them take the machine).
 */
import { createHash, randomBytes, timingSafeEqual } from "node:crypto"
import type * as NodeHttp from "node:http"
import { isIP } from "node:net"
import type { OAuthResourceAuth } from "./auth/verify.ts"

/**
 * Who may call: holders of the token, holders of an access token from the configured
 * authorization server (auth/resource.ts), or (on a loopback address only) anyone on the machine.
 */
export type HttpAuth =
  | { readonly kind: "token"; readonly token: string }
  | { readonly kind: "none" }
  | OAuthResourceAuth

/**
 * The most one HTTP request body may carry: 10 MiB, as one stdio message. A larger one is
 * answered 413 without being read.
 */
export const MAX_REQUEST_BYTES = 10 * 1024 * 1024

/** A token is at least this long, of URL-safe characters (what `token=` prints and a header carries). */
export const TOKEN_PATTERN = /^[A-Za-z0-9_-]{16,}$/

/** A fresh random token: 32 bytes, base64url (43 characters). */
export const randomToken = (): string => randomBytes(32).toString("base64url")

/** Why a token from a file cannot be used, or undefined when it can. */
export const tokenProblem = (token: string): string | undefined =>
  TOKEN_PATTERN.test(token)
    ? undefined
    : "a token must be at least 16 characters of A-Z, a-z, 0-9, '_' and '-' (one line; a trailing newline is ignored)"

/** Whether an IP address (v4, v6 or v4-mapped v6) is a loopback address. A name is not decided: false. */
export const isLoopback = (address: string): boolean => {
  const bare = address.startsWith("[") && address.endsWith("]") ? address.slice(1, -1) : address
  const kind = isIP(bare)
  if (kind === 4) return bare.startsWith("127.")
  if (kind !== 6) return false
  const lower = bare.toLowerCase()
  if (lower === "::1" || /^0{0,4}(:0{0,4}){6}:0{0,3}1$/.test(lower)) return true
  const mapped = lower.match(/^::ffff:(\d+\.\d+\.\d+\.\d+)$/)
  return mapped !== null && mapped[1]!.startsWith("127.")
}

const digest = (s: string) => createHash("sha256").update(s).digest()

/**
 * Whether the request carries the token. Both sides are hashed first, so the comparison takes the
 * same time whatever the length or the first differing byte of a guess.
 */
export const authorized = (
  auth: Exclude<HttpAuth, OAuthResourceAuth>,
  req: NodeHttp.IncomingMessage
): "ok" | "missing" | "wrong" => {
  if (auth.kind === "none") return "ok"
  const header = req.headers.authorization
  const match = typeof header === "string" ? header.match(/^Bearer[ \t]+(\S+)[ \t]*$/i) : null
  if (match === null) return "missing"
  return timingSafeEqual(digest(match[1]!), digest(auth.token)) ? "ok" : "wrong"
}

/** The body is larger than the cap: nothing past the cap was kept. */
export class TooLarge extends Error {
  readonly limit: number
  constructor(limit: number) {
    super(`the request body is over ${limit} bytes`)
    this.limit = limit
  }
}

/**
 * Reads a body of at most `limit` bytes (telling a client that waits for it to go on). A
 * Content-Length over it fails before a byte is read;
 * a body that grows past it (chunked, or lying about its length) fails as soon as it does, and
 * reading stops there.
 */
export const readCappedBody = (
  req: NodeHttp.IncomingMessage,
  res: NodeHttp.ServerResponse,
  limit: number
): Promise<string> =>
  new Promise((resolve, reject) => {
    const declared = Number(req.headers["content-length"] ?? "0")
    if (Number.isFinite(declared) && declared > limit) return reject(new TooLarge(limit))
    if (/^100-continue$/i.test(req.headers.expect ?? "")) res.writeContinue()
    const chunks: Array<Buffer> = []
    let size = 0
    const onData = (c: Buffer) => {
      size += c.length
      if (size > limit) {
        req.off("data", onData)
        req.pause()
        chunks.length = 0
        reject(new TooLarge(limit))
        return
      }
      chunks.push(c)
    }
    req.on("data", onData)
    req.on("end", () => resolve(Buffer.concat(chunks).toString("utf8")))
    req.on("error", reject)
  })

/**
 * After a 413: the rest of the body is read and dropped, so a client still sending gets the
 * answer rather than a reset. Past `budget` more bytes (at least 1 MiB) this side closes its
 * half once the answer is out (the client sees the end and stops); past twice that, the
 * connection is cut. What is dropped is never kept.
 */
export const discardRest = (req: NodeHttp.IncomingMessage, res: NodeHttp.ServerResponse, budget: number): void => {
  if (req.complete) return
  const most = Math.max(budget, 1024 * 1024)
  let seen = 0
  let ending = false
  const end = () => req.socket.end()
  const onData = (c: Buffer) => {
    seen += c.length
    if (seen > 2 * most) {
      req.off("data", onData)
      req.socket.destroy()
    } else if (seen > most && !ending) {
      ending = true
      if (res.writableFinished) end()
      else res.once("finish", end)
    }
  }
  req.on("data", onData)
  req.resume()
}

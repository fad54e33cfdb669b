/**
 * Signed `requestState` for the 2026-07-28 era: a call that needs the person answers with an
 * `InputRequiredResult` carrying this state, and the client sends it back on retry. The client
 * holds it, so it is signed (HMAC-SHA256 with a key kept in the state dir, mode 0600, or with a
 * shared store in the store, one for every replica: src/state/request-states.ts) and bound to
 * the call (tool name and a hash of its canonical arguments), the client, an expiry and a nonce;
 * a nonce is accepted once (remembered until the state expires, in the shared store when there
 * is one), so a state cannot be replayed on any replica. What the held call needs to continue
 * goes in `payload`, signed with the rest: which held call and question, where it is held, and
 * for a call that has not started its tool, the answers so far (held-calls.ts).
 */
import { createHash, createHmac, randomBytes, timingSafeEqual } from "node:crypto"
import * as NodeFs from "node:fs"
import * as NodePath from "node:path"
import { Effect } from "effect"
import type { NonceStore } from "../state/request-states.ts"

export type { NonceStore }

/** How long a state may be sent back: long enough for a person to read and answer. */
export const DEFAULT_STATE_TTL_MS = 10 * 60_000

/** The key file, in the state dir. */
export const STATE_KEY_FILE = "mcp-request-state.key"

/** What a state is bound to: the same call, from the same client. */
export interface StateBinding {
  readonly tool: string
  readonly args: unknown
  /** Who asked: the authenticated principal and the client's own name, as the server knows them. */
  readonly client: string
}

export type StateProblem =
  | "malformed"
  | "tampered"
  | "expired"
  | "replayed"
  | "other-client"
  | "other-call"
  /** The shared store that records used states could not be reached: nothing ran; retry later. */
  | "unavailable"

export type Verified<P> =
  | { readonly ok: true; readonly payload: P }
  | { readonly ok: false; readonly problem: StateProblem; readonly message: string }

interface Claims {
  readonly v: 1
  readonly tool: string
  readonly args: string
  readonly client: string
  readonly nonce: string
  readonly exp: number
  readonly payload: unknown
}

/** JSON with object keys sorted, so equal arguments hash equal whatever their key order. */
export const canonicalJson = (value: unknown): string => {
  if (Array.isArray(value)) return `[${value.map(canonicalJson).join(",")}]`
  if (value !== null && typeof value === "object") {
    const entries = Object.entries(value as Record<string, unknown>)
      .filter(([, v]) => v !== undefined)
      .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))
    return `{${entries.map(([k, v]) => `${JSON.stringify(k)}:${canonicalJson(v)}`).join(",")}}`
  }
  return JSON.stringify(value) ?? "null"
}

const hashOf = (s: string) => createHash("sha256").update(s).digest("base64url")

/**
 * The key in `stateDir`, made (32 random bytes, mode 0600) when absent. A key file that others
 * can read, or that is not this user's, is refused: anyone who can read it can forge approvals.
 */
export const loadStateKey = (stateDir: string): Buffer => {
  const file = NodePath.join(stateDir, STATE_KEY_FILE)
  NodeFs.mkdirSync(stateDir, { recursive: true, mode: 0o700 })
  if (!NodeFs.existsSync(file)) {
    // Written whole beside it, then linked in: a second server starting at the same moment reads
    // the one key that won, never a file still being written.
    const made = `${file}.${process.pid}.${randomBytes(4).toString("hex")}`
    NodeFs.writeFileSync(made, randomBytes(32), { flag: "wx", mode: 0o600 })
    try {
      NodeFs.linkSync(made, file)
    } catch (e) {
      if ((e as NodeJS.ErrnoException).code !== "EEXIST") throw e
    } finally {
      NodeFs.rmSync(made, { force: true })
    }
  }
  const stat = NodeFs.statSync(file)
  if ((stat.mode & 0o077) !== 0) {
    throw new Error(
      `${file} can be read by others (mode ${(stat.mode & 0o777).toString(8)}); it signs approvals. Run: chmod 600 ${file}`
    )
  }
  if (typeof process.getuid === "function" && stat.uid !== process.getuid()) {
    throw new Error(
      `${file} belongs to another user (uid ${stat.uid}); it signs approvals. Remove it to make a new one.`
    )
  }
  const key = NodeFs.readFileSync(file)
  if (key.length < 32)
    throw new Error(`${file} holds ${key.length} bytes, not a key of 32; remove it to make a new one.`)
  return key
}

export const memoryNonceStore = (now: () => number = Date.now): NonceStore => {
  const used = new Map<string, number>()
  return {
    shared: false,
    claim: (nonce, expiresAt) =>
      Effect.sync(() => {
        const t = now()
        for (const [n, exp] of used) if (exp <= t) used.delete(n)
        if (used.has(nonce)) return false
        used.set(nonce, expiresAt)
        return true
      })
  }
}

export interface RequestStates {
  readonly sign: <P>(binding: StateBinding, payload: P, ttlMs?: number) => string
  /** Checks a state and claims its nonce: `ok` once; every later use is `replayed`. */
  readonly verify: <P>(state: string, binding: StateBinding) => Effect.Effect<Verified<P>>
  /** Whether a state verified here is used up for every server sharing the key. */
  readonly shared: boolean
}

type Checked<P> =
  | { readonly ok: true; readonly payload: P; readonly nonce: string; readonly exp: number }
  | { readonly ok: false; readonly problem: StateProblem; readonly message: string }

const refuse = <P>(problem: StateProblem, message: string): Verified<P> & { ok: false } => ({
  ok: false,
  problem,
  message
})

export const makeRequestStates = (
  key: Buffer,
  nonces: NonceStore = memoryNonceStore(),
  now: () => number = Date.now
): RequestStates => {
  const mac = (body: string) => createHmac("sha256", key).update(body).digest()

  /** Signature, binding and expiry; the nonce is claimed after, by `verify`. */
  const check = <P>(state: string, binding: StateBinding): Checked<P> => {
    const [body, signature, ...rest] = typeof state === "string" ? state.split(".") : []
    if (body === undefined || signature === undefined || rest.length > 0) {
      return refuse("malformed", "The requestState is not one this server issued; call the tool again without it.")
    }
    const given = Buffer.from(signature, "base64url")
    const expected = mac(body)
    if (given.length !== expected.length || !timingSafeEqual(given, expected)) {
      return refuse(
        "tampered",
        "The requestState was altered or signed by another server; call the tool again without it to be asked anew."
      )
    }
    const claims = JSON.parse(Buffer.from(body, "base64url").toString("utf8")) as Claims
    if (claims.client !== hashOf(binding.client)) {
      return refuse("other-client", "The requestState was issued to another client; it cannot be used by this one.")
    }
    if (claims.tool !== binding.tool || claims.args !== hashOf(canonicalJson(binding.args))) {
      return refuse(
        "other-call",
        `The requestState belongs to another call (a different tool or arguments); retry ${claims.tool} with the arguments it was issued for, or call without it.`
      )
    }
    if (claims.exp <= now()) {
      return refuse("expired", "The requestState has expired; call the tool again without it to be asked anew.")
    }
    return { ok: true, payload: claims.payload as P, nonce: claims.nonce, exp: claims.exp }
  }

  return {
    sign: (binding, payload, ttlMs = DEFAULT_STATE_TTL_MS) => {
      const claims: Claims = {
        v: 1,
        tool: binding.tool,
        args: hashOf(canonicalJson(binding.args)),
        client: hashOf(binding.client),
        nonce: randomBytes(16).toString("base64url"),
        exp: now() + ttlMs,
        payload
      }
      const body = Buffer.from(JSON.stringify(claims)).toString("base64url")
      return `${body}.${mac(body).toString("base64url")}`
    },
    shared: nonces.shared,
    verify: <P>(state: string, binding: StateBinding): Effect.Effect<Verified<P>> => {
      const checked = check<P>(state, binding)
      if (!checked.ok) return Effect.succeed(checked)
      return nonces.claim(checked.nonce, checked.exp).pipe(
        Effect.map(
          (first): Verified<P> =>
            first
              ? { ok: true, payload: checked.payload }
              : refuse(
                  "replayed",
                  "The requestState was already used; an answer counts once. Call the tool again without it to be asked anew."
                )
        ),
        Effect.catch((why) =>
          Effect.succeed(
            refuse<P>(
              "unavailable",
              `Whether this requestState was already used cannot be checked: ${why}. Nothing ran; retry with the same requestState once the store is back.`
            )
          )
        )
      )
    }
  }
}

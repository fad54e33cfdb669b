/**
 * A call the server refused for want of a login (a 401, or a 403 asking for a wider scope) while
 * a person can be asked: the login `mcp-auth login` makes (auth/login.ts: loopback listener,
 * authorization code with PKCE) is begun, and its authorization URL goes to the call's person as
 * a URL question, by whatever the host asks with (a 2025 client of ours: URL-mode elicitation; a
 * 2026 client: our `input_required`; the terminal). Once they are back and the tokens saved, the
 * caller sends the refused request again, once: it was refused before it ran, so nothing runs
 * twice. A decline, a cancel, nobody to ask, no return in time: the refusal stands, as before.
 */
import { randomUUID } from "node:crypto"
import { Effect, Semaphore } from "effect"
import { lazyImport } from "../load/lazy.ts"
import type { OAuthClientSettings } from "./auth/client-provider.ts"
import type { LoginNeeded } from "./auth/login-needed.ts"
import type { Asker } from "./questions.ts"

// The SDK's OAuth flow loads only when a login is offered.
const loadLogin = lazyImport(() => import("./auth/login.ts"))

/** Where a connection's saved login lives, for a login offered during a call. */
export interface LoginRoute {
  readonly stateDir: string
  readonly serverUrl: string
  /** The server's name in the config. */
  readonly name: string
  /** Its `oauth` settings, a hand-registered client's secret read when a login needs it. */
  readonly settings: () => OAuthClientSettings | undefined
}

/**
 * One connection's logins: one at a time. A call refused while another call's login is under way
 * waits for it, then sends again without asking anyone.
 */
export interface LoginDoor {
  readonly route: LoginRoute
  readonly lock: Semaphore.Semaphore
  /** Logins finished through this door (a waiting call sees whether one finished meanwhile). */
  finished: number
}

export const loginDoor = (route: LoginRoute): LoginDoor => ({ route, lock: Semaphore.makeUnsafe(1), finished: 0 })

const messageOf = (e: unknown) => (e instanceof Error ? e.message : String(e))

/** The question the person is asked. */
const questionText = (server: string, tool: string, needed: LoginNeeded) =>
  `The ${server} MCP server asks for a login before it runs ${tool}${needed.scope === undefined ? "" : ` (scope "${needed.scope}")`}. Open this page and log in; the call goes on when you are back.`

/**
 * Offers the login the refusal asks for. Succeeds with undefined when there is a new login (the
 * request may be sent again), else with why not, said after the refusal.
 */
export const offerLogin = (
  door: LoginDoor,
  tool: string,
  needed: LoginNeeded,
  ask: Asker
): Effect.Effect<string | undefined> => {
  const seen = door.finished
  const { route } = door
  return door.lock.withPermits(1)(
    Effect.gen(function* () {
      if (door.finished !== seen) return undefined
      return yield* Effect.acquireUseRelease(
        Effect.tryPromise({
          try: async () => {
            const settings = route.settings()
            return (await loadLogin()).beginLogin({
              stateDir: route.stateDir,
              serverUrl: route.serverUrl,
              name: route.name,
              ...(settings === undefined ? {} : { settings })
            })
          },
          catch: (e) => `a login could not be started: ${messageOf(e)}`
        }),
        (begun) =>
          Effect.gen(function* () {
            if (begun.kind === "open") return undefined
            if (begun.url !== undefined) {
              const outcome = yield* ask({
                mode: "url",
                message: questionText(route.name, tool, needed),
                url: begun.url.href,
                elicitationId: randomUUID()
              })
              if (outcome._tag === "Unavailable") return `nobody could be sent to log in (${outcome.reason})`
              const { action } = outcome.answer
              if (action !== "accept")
                return `the person was asked to log in and ${action === "decline" ? "declined" : "cancelled"}`
            }
            return yield* Effect.tryPromise({
              try: () => begun.finish(),
              catch: (e) => `the login did not finish: ${messageOf(e)}`
            }).pipe(
              Effect.map(() => {
                door.finished++
                return undefined
              })
            )
          }),
        (begun) => Effect.sync(() => (begun.kind === "underway" ? begun.close() : undefined))
      ).pipe(Effect.catch((why: string) => Effect.succeed(why)))
    })
  )
}

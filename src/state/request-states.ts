/**
 * The 2026 era's `requestState` on a shared store (src/mcp/request-state.ts signs and checks
 * it): the key, one per store, and the record of used states. A retry may reach any replica, so
 * every replica must check with the same key and see every other's use of a state: a key file
 * per state dir, and a nonce list per process, would let a retry be refused as `tampered` by the
 * other replica, or accepted twice (once on each).
 *
 * The key is made once: every replica tries to insert 32 random bytes under one name and then
 * reads the row that won, so replicas starting together on an empty store all use one key.
 * Whoever can read `fc_secrets` can sign approvals (docs/scaling.md says who that is).
 */
import { randomBytes } from "node:crypto"
import { Effect } from "effect"
import type * as SqlClient from "effect/sql/SqlClient"

/** The row of `fc_secrets` that holds the key, in hex. */
export const STATE_KEY_NAME = "mcp-request-state-key"

/** Used states are kept this long past their expiry: a replica whose clock is behind still sees them. */
const KEPT_PAST_EXPIRY_MS = 60 * 60_000
/** Expired records are deleted once every this many claims (one statement, not one per claim). */
const SWEEP_EVERY = 200

const firstLine = (cause: unknown) => String(cause).split("\n")[0]

/** The store's key, made by the first replica that asks. Fails with a sentence naming what is wrong. */
export const storedStateKey = (sql: SqlClient.SqlClient): Effect.Effect<Buffer, string> =>
  Effect.gen(function* () {
    const made = randomBytes(32).toString("hex")
    yield* sql`INSERT INTO fc_secrets (name, value, created_at) VALUES (${STATE_KEY_NAME}, ${made}, ${Date.now()})
      ON CONFLICT (name) DO NOTHING`
    const rows = yield* sql<{ value: string }>`SELECT value FROM fc_secrets WHERE name = ${STATE_KEY_NAME}`
    return rows[0]?.value
  }).pipe(
    Effect.mapError((e) => `the shared store's approval key could not be read (${firstLine(e)})`),
    Effect.flatMap((hex) =>
      hex !== undefined && /^(?:[0-9a-f]{2}){32,}$/.test(hex)
        ? Effect.succeed(Buffer.from(hex, "hex"))
        : Effect.fail(
            `the shared store's approval key (fc_secrets, ${STATE_KEY_NAME}) is not 32 or more bytes of hex; delete that row and restart every replica to make a new one`
          )
    )
  )

/**
 * Which nonces were used. In one process by default; servers sharing a key share this too (the
 * shared store's `fc_state_nonces`, src/state/request-states.ts), or one could accept a state
 * another already took.
 */
export interface NonceStore {
  /**
   * True the first time `nonce` is claimed; false after. Remembered until `expiresAt`. Fails
   * with a sentence when the record cannot be reached: the state is then neither used nor refused.
   */
  readonly claim: (nonce: string, expiresAt: number) => Effect.Effect<boolean, string>
  /** Whether a claim here is seen by every server that shares the key (a state may then continue on any). */
  readonly shared: boolean
}

/** Used states in the store: the first insert of a nonce wins, on whichever replica it runs. */
export const sqlNonceStore = (sql: SqlClient.SqlClient): NonceStore => {
  let claims = 0
  const sweep = () => sql`DELETE FROM fc_state_nonces WHERE expires_at < ${Date.now() - KEPT_PAST_EXPIRY_MS}`
  return {
    shared: true,
    claim: (nonce, expiresAt) =>
      sql<{ ok: number }>`INSERT INTO fc_state_nonces (nonce, expires_at) VALUES (${nonce}, ${expiresAt})
        ON CONFLICT (nonce) DO NOTHING RETURNING 1 AS ok`.pipe(
        Effect.map((rows) => rows.length > 0),
        Effect.tap(() => (++claims % SWEEP_EVERY === 0 ? Effect.ignore(sweep()) : Effect.void)),
        Effect.mapError((e) => `the shared state store could not be reached (${firstLine(e)})`)
      )
  }
}

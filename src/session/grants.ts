/**
 * "Always" approvals a person gave in a session, kept in the session database so a resumed
 * session does not ask again. A grant is one normalized subject of one tool (the permission
 * engine builds the key), never a whole tool.
 */
import { Context, Effect, Layer } from "effect"
import { SessionStore } from "./store.ts"

export class GrantStore extends Context.Service<
  GrantStore,
  {
    readonly has: (sessionId: string, key: string) => Effect.Effect<boolean>
    readonly add: (sessionId: string, key: string, display: string) => Effect.Effect<void>
    /** Takes a grant back (a store shared by replicas; the session database has no way to ask for it). */
    readonly revoke?: (sessionId: string, key: string) => Effect.Effect<void>
    /**
     * True when the store is the one authority on grants and keeps its own cache (the shared
     * store: another replica may revoke one): the permission engine then asks it every time
     * instead of remembering a yes for the rest of the session.
     */
    readonly authoritative?: boolean
  }
>()("freecode/GrantStore") {
  /**
   * In the session database. A database that cannot be read (busy past its bound) counts as no
   * saved approval: the call is asked again, never refused for it. One that cannot be written
   * keeps the approval for this process only; both are said once per failure on the log.
   */
  static readonly layerSqlite = Layer.effect(
    GrantStore,
    Effect.gen(function* () {
      const store = yield* SessionStore
      return GrantStore.of({
        has: (sessionId, key) =>
          store
            .read(
              (db) =>
                db.prepare("SELECT 1 FROM grants WHERE session_id = ? AND grant_key = ?").get(sessionId, key) !==
                undefined
            )
            .pipe(Effect.catch((e) => Effect.as(Effect.logWarning(e.message), false))),
        add: (sessionId, key, display) =>
          store
            .write((db) => {
              db.prepare(
                "INSERT INTO grants (session_id, grant_key, display, created_at) VALUES (?, ?, ?, ?) ON CONFLICT DO NOTHING"
              ).run(sessionId, key, display, Date.now())
            })
            .pipe(Effect.catch((e) => Effect.logWarning(e.message)))
      })
    })
  )
}

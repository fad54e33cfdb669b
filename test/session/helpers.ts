/** A temp state folder and a SessionStore on it, for session tests. */
import * as NodeFs from "node:fs"
import * as NodeOs from "node:os"
import * as NodePath from "node:path"
import { Context, Effect, Layer, type Scope } from "effect"
import { SessionStore, type SessionStoreOptions } from "../../src/session/store.ts"

export const makeStateDir = () => {
  const dir = NodeFs.realpathSync(NodeFs.mkdtempSync(NodePath.join(NodeOs.tmpdir(), "freecode-state-")))
  return { dir, cleanup: () => NodeFs.rmSync(dir, { recursive: true, force: true }) }
}

/** Builds a SessionStore in the current scope (closed with it). */
export const openStore = (options: SessionStoreOptions): Effect.Effect<SessionStore["Service"], unknown, Scope.Scope> =>
  Layer.build(SessionStore.layer(options)).pipe(Effect.map((context) => Context.get(context, SessionStore)))

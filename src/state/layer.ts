/**
 * The shared state as one layer: the store (node:sqlite or PostgreSQL, migrated), this replica's
 * lease, and the services kept there — outputs, grants, todos, job records — in place of the
 * session database's. Given to a tool system with `store` (ToolSystemOptions) or by `--store`.
 */

import { Context, Effect, Layer } from "effect"
import { OutputStore } from "../output/store.ts"
import { ReadState } from "../read-state/read-state.ts"
import { positiveSetting } from "../session/sessions.ts"
import { parseStore, storeLayer } from "../sql/connect.ts"
import { type HostFenced, layer as hostLeaseLayer } from "./host-lease.ts"
import { outputStoreLayer } from "./outputs.ts"
import { readStateLayer } from "./read-state.ts"
import { grantStoreLayer, jobRecordStoreLayer, todoStoreLayer } from "./records.ts"

export interface SharedStateOptions {
  /** `postgres://…`, or a node:sqlite file path. */
  readonly store: string
  /** The workspace this replica serves (the project root). */
  readonly workspace: string
  /** The lease's length (default: FREECODE_STORE_LEASE_MS, else 10 s). */
  readonly leaseMs?: number
  /** Told when this replica finds itself fenced (another took over after its lease ran out). */
  readonly onFenced?: (e: HostFenced) => Effect.Effect<void>
}

/**
 * The shared store a tool system uses when its options name none: set by the CLI's `--store`.
 * Undefined: the session database or memory, as before.
 */
export const SharedStoreSetting = Context.Reference<{
  readonly store: string | undefined
  readonly onFenced?: (e: HostFenced) => Effect.Effect<void>
}>("freecode/SharedStoreSetting", { defaultValue: () => ({ store: undefined }) })

/** The lease's length in ms when the options give none (default 10 s). */
export const LEASE_SETTING = "FREECODE_STORE_LEASE_MS"

export const sharedStateLayer = (options: SharedStateOptions) => {
  const lease = Layer.unwrap(
    Effect.map(
      options.leaseMs === undefined ? positiveSetting(LEASE_SETTING) : Effect.succeed(options.leaseMs),
      (ttlMs) =>
        hostLeaseLayer({
          workspace: options.workspace,
          ...(ttlMs === undefined ? {} : { ttlMs }),
          onFenced: options.onFenced ?? ((e) => Effect.logError(e.message))
        })
    )
  )
  return Layer.mergeAll(
    outputStoreLayer.pipe(Layer.provide(OutputStore.layerSpilling)),
    readStateLayer.pipe(Layer.provide(ReadState.layer)),
    grantStoreLayer,
    todoStoreLayer,
    jobRecordStoreLayer
  ).pipe(Layer.provideMerge(lease), Layer.provideMerge(storeLayer(parseStore(options.store))))
}

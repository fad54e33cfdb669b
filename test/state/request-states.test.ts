/**
 * The 2026 era's requestState on a shared store, on node:sqlite and PostgreSQL: replicas opening
 * the store together all get one key (made once), a state signed through one replica checks on
 * another, and a state used through one is refused as `replayed` through every other.
 */
import { Context, Effect, Layer } from "effect"
import * as SqlClient from "effect/sql/SqlClient"
import { describe, expect, it } from "vitest"
import { makeRequestStates } from "../../src/mcp/request-state.ts"
import { storeLayer } from "../../src/sql/connect.ts"
import { sqlNonceStore, storedStateKey } from "../../src/state/request-states.ts"
import { useEngines } from "../support/engines.ts"

const engines = useEngines()
const binding = { tool: "bash", args: { command: "make deploy" }, client: "token\u0000cli@1" }

describe.each(engines)("requestState on the shared store ($name)", (engine) => {
  it("replicas starting together share one key; a state is used once across them", async () => {
    const location = engine.fresh()
    await Effect.runPromise(
      Effect.scoped(
        Effect.gen(function* () {
          // Four replicas, each with its own connection to the one store, asking at once.
          const clients = yield* Effect.forEach([1, 2, 3, 4], () =>
            Effect.map(Layer.build(storeLayer(location)), (context) => Context.get(context, SqlClient.SqlClient))
          )
          const keys = yield* Effect.forEach(clients, (sql) => storedStateKey(sql), { concurrency: "unbounded" })
          expect(keys[0]!.length).toBe(32)
          for (const key of keys) expect(key.equals(keys[0]!)).toBe(true)

          const [a, b, c] = clients.map((sql, i) => makeRequestStates(keys[i]!, sqlNonceStore(sql)))
          expect(a!.shared).toBe(true)
          const state = a!.sign(binding, { id: "held-1" })
          // Another replica accepts it once; every replica refuses it after, the signer too.
          expect(yield* b!.verify(state, binding)).toEqual({ ok: true, payload: { id: "held-1" } })
          for (const replica of [a!, b!, c!]) {
            expect(yield* replica.verify(state, binding)).toMatchObject({ ok: false, problem: "replayed" })
          }
          // Used at once on three replicas: exactly one wins.
          const fresh = a!.sign(binding, { id: "held-2" })
          const raced = yield* Effect.forEach([a!, b!, c!], (r) => r.verify(fresh, binding), {
            concurrency: "unbounded"
          })
          expect(raced.filter((v) => v.ok).length).toBe(1)
        })
      )
    )
  }, 60_000)
})

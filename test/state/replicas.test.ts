/**
 * Two replicas (two tool systems, as two `mcp --http` processes would build them) on one shared
 * store and one workspace: what one stores, grants or plans, the other sees. On node:sqlite (one
 * machine) and on a real PostgreSQL, where a revocation reaches the other replica's grant cache
 * through LISTEN/NOTIFY.
 */
import * as NodeFs from "node:fs"
import { Context, Effect, Layer } from "effect"
import * as SqlClient from "effect/sql/SqlClient"
import { describe, expect, it } from "vitest"
import { testToolSystem } from "../../layers/test.ts"
import { Dispatcher } from "../../src/dispatch/dispatcher.ts"
import { DefaultMode } from "../../src/permission/engine.ts"
import { GrantStore } from "../../src/session/grants.ts"
import { TodoStore } from "../../src/session/todos.ts"
import { describeStore } from "../../src/sql/connect.ts"
import { useEngines } from "../support/engines.ts"

const engines = useEngines()
const tempRoot = () => NodeFs.realpathSync(NodeFs.mkdtempSync(`${process.env.TMPDIR ?? "/tmp"}/freecode-replicas-`))

describe.each(engines)("two replicas on $name", (engine) => {
  it("an output stored through one is read through the other; todos and grants are shared", async () => {
    const root = tempRoot()
    // A file whose read is far over the model's budget: the rest is only in the stored output.
    NodeFs.writeFileSync(`${root}/big.txt`, Array.from({ length: 1500 }, (_, i) => `line ${i + 1}`).join("\n"))
    const location = engine.fresh()
    const store = location.engine === "postgres" ? location.url : location.file
    const replica = () => testToolSystem({ root, store: { store }, output: { maxChars: 2_000 } })
    await Effect.runPromise(
      Effect.gen(function* () {
        const a = yield* Layer.build(replica())
        const b = yield* Layer.build(replica())
        const read = yield* Context.get(a, Dispatcher).dispatch(
          { id: "c1", name: "read", args: { filePath: "big.txt" } },
          { sessionId: "s" }
        )
        expect(read.status).toBe("ok")
        expect(read.modelOutput).not.toContain("line 1400")
        const back = yield* Context.get(b, Dispatcher).dispatch(
          { id: "c2", name: "output", args: { id: "c1", pattern: "line 1400$" } },
          { sessionId: "s" }
        )
        expect(back.status).toBe("ok")
        expect(back.modelOutput).toContain("line 1400")

        yield* Context.get(a, TodoStore).set("s", [{ id: "1", content: "ship it", status: "pending" }])
        expect(yield* Context.get(b, TodoStore).get("s")).toEqual([{ id: "1", content: "ship it", status: "pending" }])

        // The system's type names the stores every configuration has; a shared store adds grants.
        const grantsA = Context.get(a as unknown as Context.Context<GrantStore>, GrantStore)
        const grantsB = Context.get(b as unknown as Context.Context<GrantStore>, GrantStore)
        yield* grantsA.add("s", "bash\u0000npm test", "npm test")
        expect(yield* grantsB.has("s", "bash\u0000npm test")).toBe(true)
        expect(yield* grantsA.has("s", "bash\u0000npm test")).toBe(true)
        yield* grantsB.revoke!("s", "bash\u0000npm test")
        // Seen by the other replica within a second (its cache is dropped by the notification).
        let seen = true
        for (let i = 0; i < 20 && seen; i++) {
          seen = yield* grantsA.has("s", "bash\u0000npm test")
          if (seen) yield* Effect.sleep(50)
        }
        expect(seen).toBe(false)

        // A "no" is cached too, while the replica listens (PostgreSQL), and dropped by the same
        // notification when another replica grants it.
        if (engine.name === "postgres") {
          const key = "bash\u0000make deploy"
          const sql = Context.get(a as unknown as Context.Context<SqlClient.SqlClient>, SqlClient.SqlClient)
          // Both replicas listen (their LISTEN is the last statement of their listening connection).
          for (let i = 0; i < 200; i++) {
            const [row] = yield* sql<{ n: number | string }>`SELECT count(*) AS n FROM pg_stat_activity
              WHERE datname = current_database() AND query ILIKE 'LISTEN%freecode_grants%'`
            if (Number(row?.n) >= 2) break
            yield* Effect.sleep(50)
          }
          expect(yield* grantsA.has("s", key)).toBe(false)
          // Written behind the replicas' backs (no notification): A keeps answering from its cache.
          yield* sql`INSERT INTO fc_grants (session_id, grant_key, display, created_at)
            VALUES ('s', ${JSON.stringify(key)}, 'make deploy', 0)`
          expect(yield* grantsB.has("s", key)).toBe(true)
          expect(yield* grantsA.has("s", key)).toBe(false)
          // Granted through B (which announces it): A's "no" goes, within a second.
          yield* grantsB.add("s", key, "make deploy")
          let granted = false
          for (let i = 0; i < 20 && !granted; i++) {
            granted = yield* grantsA.has("s", key)
            if (!granted) yield* Effect.sleep(50)
          }
          expect(granted).toBe(true)
        }
      }).pipe(Effect.scoped)
    )
    expect(describeStore(location)).not.toBe("")
  }, 60_000)

  it("what one replica read or wrote is what the other's stale-file check knows", async () => {
    const root = tempRoot()
    NodeFs.writeFileSync(`${root}/f.txt`, "one\n")
    const location = engine.fresh()
    const store = location.engine === "postgres" ? location.url : location.file
    await Effect.runPromise(
      Effect.gen(function* () {
        // acceptEdits, as `mcp` runs: writes inside the project ask nobody.
        const build = Layer.build(testToolSystem({ root, store: { store } })).pipe(
          Effect.provideService(DefaultMode, "acceptEdits")
        )
        const a = Context.get(yield* build, Dispatcher)
        const b = Context.get(yield* build, Dispatcher)
        const ctx = { sessionId: "s" }
        // Never read in this session: write refuses on either replica.
        const blind = yield* b.dispatch({ id: "w0", name: "write", args: { filePath: "f.txt", content: "x\n" } }, ctx)
        expect(blind.status).not.toBe("ok")
        expect(NodeFs.readFileSync(`${root}/f.txt`, "utf8")).toBe("one\n")
        // Read through one, written through the other.
        expect((yield* a.dispatch({ id: "r1", name: "read", args: { filePath: "f.txt" } }, ctx)).status).toBe("ok")
        const write = yield* b.dispatch({ id: "w1", name: "write", args: { filePath: "f.txt", content: "two\n" } }, ctx)
        expect(write.status).toBe("ok")
        // Changed behind both: the next write through the first replica is refused as stale.
        NodeFs.writeFileSync(`${root}/f.txt`, "changed elsewhere\n")
        const stale = yield* a.dispatch(
          { id: "w2", name: "write", args: { filePath: "f.txt", content: "three\n" } },
          ctx
        )
        expect(stale.status).not.toBe("ok")
        expect(stale.modelOutput).toMatch(/changed|modified|since/i)
        expect(NodeFs.readFileSync(`${root}/f.txt`, "utf8")).toBe("changed elsewhere\n")
      }).pipe(Effect.scoped)
    )
  }, 60_000)

  it("a 6 MB output stored through one replica is read back whole through the other, in chunks", async () => {
    const root = tempRoot()
    const lines = Array.from({ length: 200_000 }, (_, i) => `row ${String(i).padStart(7, "0")} ${"x".repeat(20)}`)
    NodeFs.writeFileSync(`${root}/huge.txt`, `${lines.join("\n")}\n`)
    const location = engine.fresh()
    const store = location.engine === "postgres" ? location.url : location.file
    await Effect.runPromise(
      Effect.gen(function* () {
        const a = yield* Layer.build(testToolSystem({ root, store: { store }, output: { maxChars: 2_000 } }))
        const b = yield* Layer.build(testToolSystem({ root, store: { store }, output: { maxChars: 2_000 } }))
        const ctx = { sessionId: "s" }
        const grep = yield* Context.get(a, Dispatcher).dispatch(
          { id: "g1", name: "grep", args: { pattern: "^row", path: "huge.txt" } },
          ctx
        )
        expect(grep.status).toBe("ok")
        const last = yield* Context.get(b, Dispatcher).dispatch(
          { id: "o1", name: "output", args: { id: "g1", pattern: "row 0199999" } },
          ctx
        )
        expect(last.status).toBe("ok")
        expect(last.modelOutput).toContain("row 0199999")
      }).pipe(Effect.scoped)
    )
  }, 120_000)
})

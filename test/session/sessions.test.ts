/**
 * The one owner of per-session state: a session ends by `end`, by the cap (least recently used
 * first, never one in use) or by the idle limit (never while held), and ending it empties every
 * slot and runs each cleanup once. Also: the system's services all keep their state in the one
 * owner, so ending a session there leaves nothing behind in any of them.
 */
import { describe, expect, it } from "@effect/vitest"
import { Effect, Option } from "effect"
import { testToolSystem } from "../../layers/test.ts"
import { Orchestrator } from "../../src/orchestrator/orchestrator.ts"
import { OutputStore } from "../../src/output/store.ts"
import { PermissionEngine } from "../../src/permission/engine.ts"
import { ReadState } from "../../src/read-state/read-state.ts"
import { makeSessions, Sessions } from "../../src/session/sessions.ts"
import { TodoStore } from "../../src/session/todos.ts"
import { ReadTool } from "../../src/tools/read.ts"

/** Polls `done` (bounded): what is waited for is a state, never a duration. */
const until = (done: () => boolean) =>
  Effect.gen(function* () {
    for (let i = 0; i < 200 && !done(); i++) yield* Effect.sleep("25 millis")
    return done()
  })

describe("Sessions", () => {
  it.effect("end empties every slot and runs each slot's cleanup once", () =>
    Effect.gen(function* () {
      const sessions = makeSessions({ maxSessions: 10 })
      const ended: Array<string> = []
      const a = sessions.slot<number>("a", (id, v) => Effect.sync(() => ended.push(`a:${id}:${v}`)))
      const b = sessions.slot<string>("b")
      a.getOrCreate("s1", () => 1)
      b.getOrCreate("s1", () => "x")
      a.getOrCreate("s2", () => 2)
      expect(sessions.counts()).toEqual({ sessions: 2, a: 2, b: 1 })
      yield* sessions.end("s1")
      yield* sessions.end("s1")
      expect(ended).toEqual(["a:s1:1"])
      expect(sessions.counts()).toEqual({ sessions: 1, a: 1, b: 0 })
      expect(a.get("s2")).toBe(2)
      yield* sessions.close
      expect(ended).toEqual(["a:s1:1", "a:s2:2"])
      expect(sessions.counts()).toEqual({ sessions: 0, a: 0, b: 0 })
    })
  )

  it.effect("past the cap the least recently used session ends, never one that is held", () =>
    Effect.gen(function* () {
      const sessions = makeSessions({ maxSessions: 2 })
      const slot = sessions.slot<number>("v")
      const release = sessions.hold("busy")
      slot.getOrCreate("busy", () => 0)
      slot.getOrCreate("s1", () => 1)
      slot.getOrCreate("s2", () => 2)
      expect(slot.get("s1")).toBeUndefined()
      expect(slot.get("busy")).toBe(0)
      release()
      sessions.touch("s3")
      expect(sessions.has("busy")).toBe(false)
      expect(sessions.size()).toBe(2)
      yield* sessions.settled
    })
  )

  it.live("an idle session ends, a held one does not until released, and a cleanup that fails stops no other", () =>
    Effect.gen(function* () {
      const sessions = makeSessions({ maxSessions: 10, idleMs: 100 })
      let cleaned = 0
      const bad = sessions.slot<number>("bad", () => Effect.die(new Error("a buggy cleanup")))
      const good = sessions.slot<number>("good", () => Effect.sync(() => void cleaned++))
      bad.getOrCreate("idle", () => 1)
      good.getOrCreate("idle", () => 1)
      const release = sessions.hold("held")
      good.getOrCreate("held", () => 2)
      expect(yield* until(() => !sessions.has("idle"))).toBe(true)
      yield* sessions.settled
      expect(cleaned).toBe(1)
      expect(sessions.has("held")).toBe(true)
      release()
      expect(yield* until(() => sessions.size() === 0)).toBe(true)
      yield* sessions.settled
      expect(sessions.counts()).toEqual({ sessions: 0, bad: 0, good: 0 })
      expect(cleaned).toBe(2)
      yield* sessions.close
    })
  )

  it.effect("the system's services keep their sessions' state in the one owner", () =>
    Effect.gen(function* () {
      const sessions = yield* Sessions
      const readState = yield* ReadState
      const store = yield* OutputStore
      const engine = yield* PermissionEngine
      const todos = yield* TodoStore
      const result = yield* Orchestrator.use((o) =>
        o.execute({ id: "c1", name: "read", args: { filePath: "package.json" } }, { sessionId: "s" })
      )
      expect(result.status).toBe("ok")
      yield* engine.grant("s", { tool: "bash", key: "npm test", display: "npm test" })
      yield* todos.set("s", [{ id: "1", content: "x", status: "pending" }])
      const counts = sessions.counts()
      for (const slot of ["readState", "outputs", "grants", "todos"]) expect(counts[slot], slot).toBe(1)
      yield* sessions.end("s")
      expect(Object.values(sessions.counts()).every((n) => n === 0)).toBe(true)
      expect(Option.isNone(yield* store.get("s", "c1"))).toBe(true)
      expect(yield* readState.lastSeen("s", `${process.cwd()}/package.json`)).toBeUndefined()
      expect(yield* todos.get("s")).toEqual([])
    }).pipe(Effect.provide(testToolSystem({ root: process.cwd(), tools: [ReadTool] })))
  )
})

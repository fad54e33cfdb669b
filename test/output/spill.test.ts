import { NodeServices } from "@effect/platform-node"
import { describe, expect, it } from "@effect/vitest"
import { Effect, FileSystem, Option } from "effect"
import { omittedMarker } from "../../src/output/omitted-marker.ts"
import { forEachSpilledLine } from "../../src/output/spill.ts"
import { makeMemoryStore } from "../../src/output/store.ts"
import { adaptiveTruncate } from "../../src/output/truncate.ts"
import { truncateSpilled } from "../../src/output/truncate-spilled.ts"
import { makeSessions } from "../../src/session/sessions.ts"

const numbered = (n: number) => Array.from({ length: n }, (_, i) => `line ${i + 1} ${"·".repeat(i % 50)}\n`).join("")

/** Writes `text` in uneven pieces, as a pipe delivers it. */
const writeInPieces = (write: (s: string) => Effect.Effect<void>, text: string) =>
  Effect.gen(function* () {
    for (let at = 0, k = 1; at < text.length; k++) {
      const size = 1000 + ((k * 7919) % 50_000)
      yield* write(text.slice(at, at + size))
      at += size
    }
  })

const spillingStore = (bytes: number, options: { maxBytes?: number; sessions?: number } = {}) =>
  Effect.gen(function* () {
    const fs = yield* FileSystem.FileSystem
    const dir = yield* fs.makeTempDirectoryScoped({ prefix: "freecode-spill-test-" })
    const sessions = makeSessions({ maxSessions: options.sessions ?? 5 })
    const store = makeMemoryStore(bytes, sessions, {
      keepChars: 50_000,
      spill: { fs, dir, maxBytes: options.maxBytes ?? 1 << 30 }
    })
    return { store, dir, fs, sessions }
  })

describe("OutputStore writers", () => {
  it.effect("an output that fits stays in memory, as a put would keep it", () =>
    Effect.gen(function* () {
      const store = makeMemoryStore(1_000_000, makeSessions({ maxSessions: 5 }))
      const writer = yield* store.open({ sessionId: "s", id: "a", tool: "bash" })
      yield* writer.write("one\n")
      yield* writer.write("two")
      expect(writer.text()).toBe("one\ntwo")
      const { result, view } = yield* writer.commit
      expect(result).toEqual({ stored: true })
      expect(view).toEqual({ kind: "text", text: "one\ntwo" })
      expect(Option.getOrThrow(yield* store.get("s", "a"))).toMatchObject({ text: "one\ntwo", lines: 2, chars: 7 })
    })
  )

  it.effect("without files, an output past the budget keeps only its two ends and is not stored", () =>
    Effect.gen(function* () {
      const store = makeMemoryStore(100_000, makeSessions({ maxSessions: 5 }), { keepChars: 5_000 })
      const writer = yield* store.open({ sessionId: "s", id: "a", tool: "bash" })
      const text = numbered(20_000)
      yield* writeInPieces(writer.write, text)
      expect(writer.text()).toBeUndefined()
      const { result, view } = yield* writer.commit
      expect(result).toMatchObject({
        stored: false,
        reason: expect.stringContaining("larger than the per-session store")
      })
      expect(view).toMatchObject({ kind: "spilled", chars: text.length, lines: 20_000 })
      if (view.kind !== "spilled") return
      expect(view.head).toBe(text.slice(0, 5_000))
      expect(view.tail).toBe(text.slice(text.length - 5_000))
      expect(Option.isNone(yield* store.get("s", "a"))).toBe(true)
    })
  )

  it.effect("past the budget a spilling store moves the output to a file it owns, read back line by line", () =>
    Effect.gen(function* () {
      const { store, dir, fs } = yield* spillingStore(100_000)
      const writer = yield* store.open({ sessionId: "s", id: "big/1", tool: "bash" })
      const text = numbered(30_000)
      yield* writeInPieces(writer.write, text)
      const files = yield* fs.readDirectory(dir)
      expect(files.length).toBe(1)
      yield* writer.commit
      const entry = Option.getOrThrow(yield* store.get("s", "big/1"))
      expect(entry).toMatchObject({ text: "", chars: text.length, lines: 30_000, bytes: Buffer.byteLength(text) })
      expect(yield* fs.readFileString(entry.file!)).toBe(text)
      const seen: Array<string> = []
      yield* forEachSpilledLine(fs, entry.file!, (line, i) => {
        if (i >= 14_999) seen.push(line)
        return i < 15_001
      })
      expect(seen).toEqual(text.split("\n").slice(14_999, 15_002))
    }).pipe(Effect.provide(NodeServices.layer))
  )

  it.effect("discard removes the file; a put too large for memory spills too", () =>
    Effect.gen(function* () {
      const { store, dir, fs } = yield* spillingStore(10_000)
      const writer = yield* store.open({ sessionId: "s", id: "a", tool: "bash" })
      yield* writer.write("x".repeat(20_000))
      expect((yield* fs.readDirectory(dir)).length).toBe(1)
      yield* writer.discard
      expect(yield* fs.readDirectory(dir)).toEqual([])
      expect(yield* store.put({ sessionId: "s", id: "p", tool: "read", text: "y\n".repeat(10_000) })).toEqual({
        stored: true
      })
      expect(Option.getOrThrow(yield* store.get("s", "p")).file).toBeDefined()
    }).pipe(Effect.provide(NodeServices.layer))
  )

  it.effect("spilled outputs are held to the disk budget (oldest first) and leave with their session", () =>
    Effect.gen(function* () {
      const { store, dir, fs, sessions } = yield* spillingStore(1_000, { maxBytes: 25_000, sessions: 2 })
      for (const id of ["a", "b", "c"]) yield* store.put({ sessionId: "s1", id, tool: "t", text: "z".repeat(10_000) })
      expect(yield* store.ids("s1")).toEqual(["b", "c"])
      expect((yield* fs.readDirectory(dir)).length).toBe(2)
      yield* store.put({ sessionId: "s2", id: "x", tool: "t", text: "q" })
      yield* store.put({ sessionId: "s3", id: "y", tool: "t", text: "q" })
      expect(yield* store.ids("s1")).toEqual([])
      // The evicted session's files are removed in the background of the put that evicted it.
      yield* sessions.settled
      expect(yield* fs.readDirectory(dir)).toEqual([])
    }).pipe(Effect.provide(NodeServices.layer))
  )

  it.effect("concurrent writes while the output moves to its file lose nothing", () =>
    Effect.gen(function* () {
      const { store, fs } = yield* spillingStore(10_000)
      const writer = yield* store.open({ sessionId: "s", id: "a", tool: "t" })
      const pieces = Array.from({ length: 200 }, (_, i) => `${String(i).padStart(3, "0")}${"-".repeat(996)}\n`)
      yield* Effect.forEach(pieces, (p) => writer.write(p), { concurrency: 16, discard: true })
      yield* writer.commit
      const entry = Option.getOrThrow(yield* store.get("s", "a"))
      const lines = (yield* fs.readFileString(entry.file!)).split("\n").filter((l) => l !== "")
      expect(lines.length).toBe(200)
      expect(new Set(lines.map((l) => l.slice(0, 3))).size).toBe(200)
      expect(entry).toMatchObject({ lines: 200, chars: 200_000 })
    }).pipe(Effect.provide(NodeServices.layer))
  )

  it.effect("an output cut at the spill limit keeps its true tail and says how much was dropped", () =>
    Effect.gen(function* () {
      const { store } = yield* spillingStore(1_000, { maxBytes: 50_000 })
      const writer = yield* store.open({ sessionId: "s", id: "a", tool: "bash" })
      const text = numbered(5_000)
      yield* writeInPieces(writer.write, text)
      const { view } = yield* writer.commit
      const entry = Option.getOrThrow(yield* store.get("s", "a"))
      expect(entry.droppedBytes).toBeGreaterThan(0)
      expect(view.kind === "spilled" && view.tail.endsWith(text.slice(-1_000))).toBe(true)
    }).pipe(Effect.provide(NodeServices.layer))
  )
})

describe("truncateSpilled", () => {
  it.effect("cuts a spilled output exactly as adaptiveTruncate cuts the whole text", () =>
    Effect.gen(function* () {
      const store = makeMemoryStore(10_000, makeSessions({ maxSessions: 5 }), { keepChars: 40_000 })
      const text = numbered(50_000)
      const writer = yield* store.open({ sessionId: "s", id: "a", tool: "bash" })
      yield* writeInPieces(writer.write, text)
      const { view } = yield* writer.commit
      if (view.kind !== "spilled") throw new Error("expected a spilled view")
      for (const direction of ["head", "tail", "both"] as const) {
        const options = { maxChars: 30_000, maxLines: 3_000, direction, marker: omittedMarker("a", { stored: true }) }
        expect(truncateSpilled(view, options)).toEqual(adaptiveTruncate(text, options))
      }
    })
  )

  it.effect("one line too long for any budget is cut by characters at both ends", () =>
    Effect.gen(function* () {
      const store = makeMemoryStore(10_000, makeSessions({ maxSessions: 5 }), { keepChars: 40_000 })
      const writer = yield* store.open({ sessionId: "s", id: "a", tool: "bash" })
      yield* writer.write(`start${"y".repeat(500_000)}end`)
      const { view } = yield* writer.commit
      if (view.kind !== "spilled") throw new Error("expected a spilled view")
      const cut = truncateSpilled(view, {
        maxChars: 2_000,
        maxLines: 100,
        direction: "both",
        marker: omittedMarker("a", { stored: true })
      })
      expect(cut.text.startsWith("start")).toBe(true)
      expect(cut.text.endsWith("end")).toBe(true)
      expect(cut.text.length).toBeLessThanOrEqual(2_000)
    })
  )
})

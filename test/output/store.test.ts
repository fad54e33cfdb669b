import { describe, expect, it } from "@effect/vitest"
import { ConfigProvider, Effect, Exit, Layer, Option } from "effect"
import { OutputConfig } from "../../src/output/config.ts"
import { HOLD_AS_BYTES_FROM, makeMemoryStore, OutputStore } from "../../src/output/store.ts"
import { makeSessions } from "../../src/session/sessions.ts"

describe("OutputStore (memory)", () => {
  it.effect("keeps whole outputs by session and id, and counts their lines", () =>
    Effect.gen(function* () {
      const store = makeMemoryStore(1_000_000, makeSessions({ maxSessions: 5 }))
      expect(yield* store.put({ sessionId: "s", id: "c1", tool: "bash", text: "a\nb\nc\n" })).toEqual({ stored: true })
      const got = yield* store.get("s", "c1")
      expect(Option.getOrThrow(got)).toMatchObject({ text: "a\nb\nc\n", lines: 3, chars: 6, tool: "bash" })
      expect(Option.isNone(yield* store.get("other", "c1"))).toBe(true)
      expect(Option.isNone(yield* store.get("s", "missing"))).toBe(true)
    })
  )

  it.effect("evicts the least recently used outputs of a session past its byte budget", () =>
    Effect.gen(function* () {
      const store = makeMemoryStore(30, makeSessions({ maxSessions: 5 }))
      yield* store.put({ sessionId: "s", id: "a", tool: "t", text: "x".repeat(10) })
      yield* store.put({ sessionId: "s", id: "b", tool: "t", text: "x".repeat(10) })
      yield* store.get("s", "a") // a is now the most recently used
      yield* store.put({ sessionId: "s", id: "c", tool: "t", text: "x".repeat(10) })
      yield* store.put({ sessionId: "s", id: "d", tool: "t", text: "x".repeat(10) })
      expect(yield* store.ids("s")).toEqual(["a", "c", "d"])
    })
  )

  it.effect("gives back exactly the text it was given, whatever its characters, held as a string or as bytes", () =>
    Effect.gen(function* () {
      const store = makeMemoryStore(1_000_000, makeSessions({ maxSessions: 5 }))
      const short = ["ascii\n", "naïve café — 日本語 🎉\r\n\ttab", "\u0000nul and \uFEFFbom", "lone \uD800 surrogate"]
      // The same, long enough to be held as UTF-8 bytes.
      const texts = [...short, ...short.map((t) => t.repeat(Math.ceil(HOLD_AS_BYTES_FROM / t.length) + 1))]
      for (const [i, text] of texts.entries()) yield* store.put({ sessionId: "s", id: `c${i}`, tool: "t", text })
      for (const [i, text] of texts.entries()) {
        const got = Option.getOrThrow(yield* store.get("s", `c${i}`))
        expect(got.text).toBe(text)
        expect(got.chars).toBe(text.length)
      }
    })
  )

  it.effect("counts bytes, not characters", () =>
    Effect.gen(function* () {
      const store = makeMemoryStore(10, makeSessions({ maxSessions: 5 }))
      // 4 characters, 12 bytes in UTF-8.
      const result = yield* store.put({ sessionId: "s", id: "a", tool: "t", text: "€€€€" })
      expect(result.stored).toBe(false)
    })
  )

  it.effect("refuses an output larger than a session's budget, saying why", () =>
    Effect.gen(function* () {
      const store = makeMemoryStore(10, makeSessions({ maxSessions: 5 }))
      const result = yield* store.put({ sessionId: "s", id: "a", tool: "t", text: "x".repeat(11) })
      expect(result).toEqual({ stored: false, reason: expect.stringContaining("larger than the per-session store") })
    })
  )

  it.effect("drops the least recently used session past the session limit", () =>
    Effect.gen(function* () {
      const store = makeMemoryStore(1000, makeSessions({ maxSessions: 2 }))
      yield* store.put({ sessionId: "s1", id: "a", tool: "t", text: "1" })
      yield* store.put({ sessionId: "s2", id: "a", tool: "t", text: "2" })
      yield* store.get("s1", "a")
      yield* store.put({ sessionId: "s3", id: "a", tool: "t", text: "3" })
      expect(Option.isSome(yield* store.get("s1", "a"))).toBe(true)
      expect(Option.isNone(yield* store.get("s2", "a"))).toBe(true)
      expect(Option.isSome(yield* store.get("s3", "a"))).toBe(true)
    })
  )
})

describe("OutputConfig", () => {
  const withEnv = (env: Record<string, string>) =>
    Effect.gen(function* () {
      return yield* OutputConfig
    }).pipe(
      Effect.provide(OutputConfig.layer.pipe(Layer.provide(ConfigProvider.layer(ConfigProvider.fromEnv({ env })))))
    )

  it.effect("reads the five FREECODE_OUTPUT_* settings, with defaults", () =>
    Effect.gen(function* () {
      const settings = yield* withEnv({ FREECODE_OUTPUT_MAX_CHARS: "1234", FREECODE_OUTPUT_STORE_SESSIONS: "7" })
      expect(settings).toEqual({
        maxChars: 1234,
        maxLines: 3000,
        uiMaxChars: 500_000,
        storeBytes: 64 * 1024 * 1024,
        storeSessions: 7
      })
    })
  )

  it.effect("refuses a present but invalid value instead of falling back to the default", () =>
    Effect.gen(function* () {
      const bad = yield* Effect.exit(withEnv({ FREECODE_OUTPUT_MAX_LINES: "lots" }))
      expect(Exit.isFailure(bad)).toBe(true)
      const zero = yield* Effect.flip(withEnv({ FREECODE_OUTPUT_UI_MAX_CHARS: "0" }))
      expect(zero.message).toBe("FREECODE_OUTPUT_UI_MAX_CHARS must be a positive integer, got 0")
    })
  )

  it.effect("sizes the memory store from the settings", () =>
    Effect.gen(function* () {
      const store = yield* OutputStore
      expect((yield* store.put({ sessionId: "s", id: "a", tool: "t", text: "x".repeat(11) })).stored).toBe(false)
      expect((yield* store.put({ sessionId: "s", id: "a", tool: "t", text: "x".repeat(10) })).stored).toBe(true)
    }).pipe(Effect.provide(OutputStore.layerMemory.pipe(Layer.provide(OutputConfig.layerWith({ storeBytes: 10 })))))
  )
})

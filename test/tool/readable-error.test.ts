import { NodeServices } from "@effect/platform-node"
import { describe, expect, it } from "@effect/vitest"
import { Effect, FileSystem, Schema } from "effect"
import { readableError } from "../../src/tool/readable-error.ts"

describe("readableError", () => {
  it.effect("a platform error reads as the path and what went wrong, not Effect's module and method", () =>
    Effect.gen(function* () {
      const fs = yield* FileSystem.FileSystem
      const e = yield* Effect.flip(fs.readFileString("/nonexistent-freecode/x"))
      expect(e.message).toContain("FileSystem.readFile")
      expect(readableError(e)).toBe("/nonexistent-freecode/x: no such file or directory")
    }).pipe(Effect.provide(NodeServices.layer))
  )

  it.effect("a schema error reads as its issues, without SchemaError(…)", () =>
    Effect.gen(function* () {
      const e = yield* Effect.flip(Schema.decodeUnknownEffect(Schema.Struct({ a: Schema.String }))({ a: 1 }))
      expect(String(e)).toContain("SchemaError(")
      expect(readableError(e)).toBe('Expected string at ["a"]')
    })
  )

  it("anything else: its message, or its text", () => {
    expect(readableError(new Error("boom"))).toBe("boom")
    expect(readableError("plain")).toBe("plain")
    expect(readableError(42)).toBe("42")
  })
})

import { execFileSync } from "node:child_process"
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { NodeServices } from "@effect/platform-node"
import { describe, expect, it } from "@effect/vitest"
import { Effect, FileSystem, Option } from "effect"
import { countNewlines } from "../../src/output/capture.ts"
import { makeMemoryStore } from "../../src/output/store.ts"
import { makeSessions } from "../../src/session/sessions.ts"

const request = { sessionId: "s", id: "c1", tool: "bash" }
const noShow = () => Effect.void

/** Runs a shell command with its output going to `file`, as bash does. */
const writeWithShell = (command: string, file: string) =>
  execFileSync("/bin/bash", ["-c", 'exec /bin/bash -c "$1" > "$2" 2>&1', "bash", command, file])

describe("capture: an output a child writes into a file", () => {
  it("countNewlines agrees with a plain count at every alignment and length", () => {
    const text = Buffer.from("a\n\nbc\n\n\n\u00e9\n\ud83d\ude00x\n".repeat(37))
    for (let start = 0; start < 5; start++) {
      for (const end of [start, start + 1, start + 7, text.length - 3, text.length]) {
        const piece = new Uint8Array(text.subarray(start, end))
        const plain = [...piece].filter((b) => b === 10).length
        expect(countNewlines(piece, piece.length)).toBe(plain)
        // An unaligned view takes the byte-by-byte path.
        const unaligned = new Uint8Array(piece.length + 1).subarray(1)
        unaligned.set(piece)
        expect(countNewlines(unaligned, unaligned.length)).toBe(plain)
      }
    }
  })

  it.live("a small output comes back as text, counted exactly, and its file is removed", () =>
    Effect.gen(function* () {
      const fs = yield* FileSystem.FileSystem
      const dir = yield* fs.makeTempDirectoryScoped({ prefix: "freecode-capture-" })
      const store = makeMemoryStore(1_000_000, makeSessions({ maxSessions: 5 }), {
        spill: { fs, dir, maxBytes: 10_000_000 }
      })
      const shown: Array<string> = []
      const writer = yield* store.capture(request, (text) => Effect.sync(() => shown.push(text)))
      writeWithShell("printf 'caf\\xc3\\xa9\\n\\xf0\\x9f\\x98\\x80 two\\nno newline'", writer.path)
      yield* writer.follow
      expect(shown.join("")).toBe("café\n😀 two\nno newline")
      yield* writer.write("\n[exit code 1]\n")
      const { result, view } = yield* writer.commit
      expect(result).toEqual({ stored: true })
      expect(view).toEqual({ kind: "text", text: "café\n😀 two\nno newline\n[exit code 1]\n" })
      expect(existsSync(writer.path)).toBe(false)
      const entry = Option.getOrThrow(yield* store.get("s", "c1"))
      expect(entry).toMatchObject({ chars: view.kind === "text" ? view.text.length : 0, lines: 4 })
    }).pipe(Effect.scoped, Effect.provide(NodeServices.layer))
  )

  it.live("a large output stays in the store's file, with its ends and true counts", () =>
    Effect.gen(function* () {
      const fs = yield* FileSystem.FileSystem
      const dir = yield* fs.makeTempDirectoryScoped({ prefix: "freecode-capture-" })
      const store = makeMemoryStore(1_000_000, makeSessions({ maxSessions: 5 }), {
        keepChars: 1000,
        spill: { fs, dir, maxBytes: 100_000_000 }
      })
      const writer = yield* store.capture(request, noShow)
      writeWithShell("seq 1 300000", writer.path)
      const { result, view } = yield* writer.commit
      expect(result).toEqual({ stored: true })
      expect(view).toMatchObject({ kind: "spilled", lines: 300_000, chars: 1_988_895, bytes: 1_988_895 })
      if (view.kind !== "spilled") throw new Error("expected a spilled view")
      expect(view.head.startsWith("1\n2\n3\n")).toBe(true)
      expect(view.head.length).toBe(1000)
      expect(view.tail.endsWith("299999\n300000\n")).toBe(true)
      expect(view.tail.length).toBe(1000)
      const entry = Option.getOrThrow(yield* store.get("s", "c1"))
      expect(entry.file).toBe(writer.path)
      expect(readFileSync(writer.path, "utf8").split("\n")[149_999]).toBe("150000")
    }).pipe(Effect.scoped, Effect.provide(NodeServices.layer))
  )

  it.live("a store without files keeps a large output's ends only, and leaves no file behind", () =>
    Effect.gen(function* () {
      const store = makeMemoryStore(1_000_000, makeSessions({ maxSessions: 5 }), { keepChars: 1000 })
      const writer = yield* store.capture(request, noShow)
      expect(writer.path.startsWith(tmpdir())).toBe(true)
      writeWithShell("seq 1 300000", writer.path)
      const { result, view } = yield* writer.commit
      expect(result.stored).toBe(false)
      expect(view).toMatchObject({ kind: "spilled", lines: 300_000 })
      expect(existsSync(writer.path)).toBe(false)
      expect(Option.isNone(yield* store.get("s", "c1"))).toBe(true)
    })
  )

  it.live("past the limit for one output it says so; the file keeps the limit's worth", () =>
    Effect.gen(function* () {
      const dir = mkdtempSync(join(tmpdir(), "freecode-capture-"))
      try {
        const fs = yield* FileSystem.FileSystem
        const store = makeMemoryStore(100_000, makeSessions({ maxSessions: 5 }), {
          keepChars: 100,
          spill: { fs, dir, maxBytes: 500_000 }
        })
        const writer = yield* store.capture(request, noShow)
        writeWithShell("seq 1 200000", writer.path)
        // The file's own size decides, before a single byte of it was read.
        expect(writer.limitBytes).toBe(500_000)
        expect(yield* writer.overLimit).toBe(true)
        yield* writer.follow
        const { view } = yield* writer.commit
        expect(view).toMatchObject({ kind: "spilled", lines: 200_000 })
        if (view.kind === "spilled") expect(view.tail.endsWith("200000\n")).toBe(true)
        const entry = Option.getOrThrow(yield* store.get("s", "c1"))
        expect(entry.droppedBytes).toBe(1_288_895 - 500_000)
        expect(readFileSync(writer.path).length).toBe(500_000)
      } finally {
        rmSync(dir, { recursive: true, force: true })
      }
    }).pipe(Effect.provide(NodeServices.layer))
  )

  it.live("characters are counted exactly across read chunks, a character split between them included", () =>
    Effect.gen(function* () {
      const fs = yield* FileSystem.FileSystem
      const dir = yield* fs.makeTempDirectoryScoped({ prefix: "freecode-capture-" })
      const store = makeMemoryStore(100_000, makeSessions({ maxSessions: 5 }), {
        keepChars: 100,
        spill: { fs, dir, maxBytes: 100_000_000 }
      })
      const writer = yield* store.capture(request, noShow)
      // A 4-byte emoji straddles the 1 MiB read boundary; invalid UTF-8 and CRLF lines follow.
      const text = Buffer.concat([
        Buffer.from(`${"a".repeat(1024 * 1024 - 2)}😀\r\n`),
        Buffer.from([0xff, 0xfe, 0x0a]),
        Buffer.from("é\n".repeat(1000))
      ])
      writeFileSync(writer.path, text)
      const { view } = yield* writer.commit
      const decoded = new TextDecoder().decode(text)
      expect(view).toMatchObject({ kind: "spilled", chars: decoded.length, bytes: text.length, lines: 1002 })
    }).pipe(Effect.scoped, Effect.provide(NodeServices.layer))
  )

  it.live("a file that cannot be created is a failure the caller can act on, not a defect", () =>
    Effect.gen(function* () {
      const fs = yield* FileSystem.FileSystem
      const store = makeMemoryStore(1_000_000, makeSessions({ maxSessions: 5 }), {
        spill: { fs, dir: "/nonexistent/outputs", maxBytes: 1_000_000 }
      })
      const failure = yield* Effect.flip(store.capture(request, noShow))
      expect(failure._tag).toBe("ToolFailure")
      expect(failure.message).toMatch(/^Could not create a file for the command's output \(ENOENT/)
      expect(failure.message).toContain("Check the disk has free space")
    }).pipe(Effect.provide(NodeServices.layer))
  )

  it.live("discard closes and removes the file", () =>
    Effect.gen(function* () {
      const store = makeMemoryStore(1_000_000, makeSessions({ maxSessions: 5 }))
      const writer = yield* store.capture(request, noShow)
      writeWithShell("echo hi", writer.path)
      yield* writer.discard
      expect(existsSync(writer.path)).toBe(false)
    })
  )
})

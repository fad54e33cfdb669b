/**
 * Content-aware compression through the orchestrator, with real bash commands: a timed-out or
 * cancelled log (its kind comes from bash's declaration, not from result metadata) and a log
 * larger than the store's memory budget (read back line by line from the spilled file).
 */
import { NodeServices } from "@effect/platform-node"
import { describe, expect, it } from "@effect/vitest"
import { ConfigProvider, Deferred, Effect, Fiber, FileSystem, Layer, Option } from "effect"
import { testToolSystem } from "../../layers/test.ts"
import { Orchestrator } from "../../src/orchestrator/orchestrator.ts"
import type { OutputSettings } from "../../src/output/config.ts"
import { OutputStore } from "../../src/output/store.ts"
import { BashTool } from "../../src/tools/bash.ts"
import { OutputTool } from "../../src/tools/output.ts"

/** A temp project with `build.sh` (bash classifies `./build.sh` as a log); compression on. */
const withBuild = <A, E>(
  script: string,
  body: (root: string) => Effect.Effect<A, E, Orchestrator | OutputStore | FileSystem.FileSystem>,
  output: Partial<OutputSettings> = {}
) =>
  Effect.gen(function* () {
    const fs = yield* FileSystem.FileSystem
    const root = yield* fs.realPath(yield* fs.makeTempDirectoryScoped({ prefix: "freecode-compress-" }))
    yield* fs.writeFileString(`${root}/build.sh`, `#!/bin/bash\n${script}\n`)
    yield* fs.chmod(`${root}/build.sh`, 0o755)
    const env = ConfigProvider.layer(ConfigProvider.fromEnv({ env: { FREECODE_BASH_COMPRESS: "1" } }))
    const system = testToolSystem({ root, tools: [BashTool, OutputTool], output }).pipe(Layer.provide(env))
    return yield* body(root).pipe(Effect.provide(system))
  }).pipe(Effect.provide(NodeServices.layer))

const run = (id: string, name: string, args: Record<string, unknown>) =>
  Orchestrator.use((o) => o.execute({ id, name, args }, { sessionId: "s" }))

/** Noise that looks like nothing failed: `[i/n] CC obj/…` lines, as ninja prints them. */
const noise = (from: number, to: number, n: number) =>
  `for i in $(seq ${from} ${to}); do echo "[$i/${n}] CC obj/module_$((i % 97))/file_$i.o"; done`

/** Polls `check` every 100 ms, for up to 20 s. */
const waitFor = <E>(check: () => Effect.Effect<boolean, E>) =>
  Effect.gen(function* () {
    for (let i = 0; i < 200; i++) {
      if (yield* Effect.orElseSucceed(check(), () => false)) return
      yield* Effect.sleep("100 millis")
    }
  })

describe("compression of a failed or spilled bash output", () => {
  it.live(
    "a timed-out log is compressed: the error line in the middle survives, the rest points at output",
    () =>
      withBuild(
        [
          noise(1, 1500, 3000),
          `echo "src/net/socket.c:88:12: error: use of undeclared identifier 'sockfd'"`,
          noise(1501, 3000, 3000),
          "sleep 30"
        ].join("\n"),
        () =>
          Effect.gen(function* () {
            const result = yield* run("t1", "bash", { command: "./build.sh", timeout: 4_000 })
            expect(result.status).toBe("timeout")
            expect(result.metadata).toMatchObject({ outputKind: "log" })
            expect(result.outputLines).toBe(3001)
            // The error message stays first; the partial output follows, compressed.
            expect(
              result.modelOutput.startsWith(
                'bash timed out after 4s (a server, a watcher or a longer job: run it with "run_in_background": true and follow it with the job tool); the output so far follows.\n'
              )
            ).toBe(true)
            expect(result.modelOutput).toContain("src/net/socket.c:88:12: error: use of undeclared identifier 'sockfd'")
            expect(result.modelOutput).toContain('Retrieve them with output {"id": "t1", "offset": 11, "limit": 200}')
            expect(result.modelOutput).toContain("[3000/3000] CC obj/module_90/file_3000.o\n")
            expect(result.modelOutput.length).toBeLessThan(6_000)
            expect(result.outputChars).toBeGreaterThan(100_000)
            expect(result.truncated).toBe(true)
            // The marker's window is the stored output's.
            const back = yield* run("o1", "output", { id: "t1", offset: 11, limit: 2 })
            expect(back.modelOutput).toContain("  11\t[11/3000] CC obj/module_11/file_11.o\n  12\t[12/3000]")
          })
      ),
    60_000
  )

  it.live(
    "a command of no known kind keeps the error in its middle whether it exits non-zero or 0",
    () =>
      withBuild(
        [
          `for i in $(seq 1 2000); do echo "processed record $i, checksum $((i * 7919 % 100000))"; done`,
          `echo "KeyError: 'customer_id'"`,
          `for i in $(seq 2001 4000); do echo "processed record $i, checksum $((i * 7919 % 100000))"; done`,
          'exit "$1"'
        ].join("\n"),
        () =>
          Effect.gen(function* () {
            const failed = yield* run("f1", "bash", { command: "bash build.sh 3" })
            expect(failed.metadata).toMatchObject({ outputKind: "other", exitCode: 3 })
            expect(failed.modelOutput).toContain("KeyError: 'customer_id'")
            expect(failed.modelOutput).toContain("[exit code 3]")
            expect(failed.modelOutput.length).toBeLessThan(8_000)
            const ok = yield* run("f2", "bash", { command: "bash build.sh 0" })
            expect(ok.metadata).toMatchObject({ outputKind: "other", exitCode: 0 })
            expect(ok.modelOutput).toContain("KeyError: 'customer_id'")
          })
      ),
    60_000
  )

  it.live(
    "a cancelled log is compressed the same way, the cancel message first",
    () =>
      withBuild(
        [
          noise(1, 800, 2000),
          `echo "FAILED: obj/crypto/aes.o (exit status 1)"`,
          noise(801, 2000, 2000),
          "echo done > ready",
          "sleep 30"
        ].join("\n"),
        (root) =>
          Effect.gen(function* () {
            const orchestrator = yield* Orchestrator
            const cancel = yield* Deferred.make<void>()
            const fiber = yield* Effect.forkChild(
              orchestrator.execute(
                { id: "c1", name: "bash", args: { command: "./build.sh" } },
                { sessionId: "s", cancelled: Deferred.await(cancel) }
              )
            )
            const fs = yield* FileSystem.FileSystem
            // Cancel once the script has printed everything (it then writes `ready` and sleeps).
            yield* waitFor(() => fs.exists(`${root}/ready`))
            yield* Effect.sleep("300 millis")
            yield* Deferred.succeed(cancel, undefined)
            const result = yield* Fiber.join(fiber)
            expect(result.status).toBe("interrupted")
            expect(result.metadata).toMatchObject({ outputKind: "log" })
            expect(
              result.modelOutput.startsWith("bash was cancelled by the person; the output so far follows.\n")
            ).toBe(true)
            expect(result.modelOutput).toContain("FAILED: obj/crypto/aes.o (exit status 1)")
            expect(result.modelOutput).toContain('output {"id": "c1", "offset": 11, "limit": 200}')
            expect(result.modelOutput.length).toBeLessThan(6_000)
          })
      ),
    60_000
  )

  it.live(
    "a log past the store's memory budget spills; compression reads the file and keeps the buried failures",
    () =>
      withBuild(
        [
          noise(1, 20_000, 60_000),
          `echo "src/deep/parser.c:412:9: error: expected ';' before '}' token"`,
          noise(20_001, 40_000, 60_000),
          `echo "Traceback (most recent call last):"`,
          `echo "ValueError: checksum mismatch in chunk 17"`,
          noise(40_001, 60_000, 60_000),
          "exit 2"
        ].join("\n"),
        () =>
          Effect.gen(function* () {
            const result = yield* run("s1", "bash", { command: "./build.sh" })
            expect(result.status).toBe("ok")
            expect(result.metadata).toMatchObject({ outputKind: "log", exitCode: 2 })
            expect(result.outputChars).toBeGreaterThan(2_000_000)
            // It did spill: the store holds it in a file.
            const entry = Option.getOrThrow(yield* OutputStore.use((s) => s.get("s", "s1")))
            expect(entry.file).toBeDefined()

            const model = result.modelOutput
            expect(model.length).toBeLessThanOrEqual(30_000)
            expect(model).toContain("src/deep/parser.c:412:9: error: expected ';' before '}' token")
            expect(model).toContain("Traceback (most recent call last):")
            expect(model).toContain("ValueError: checksum mismatch in chunk 17")
            expect(model.endsWith("[60000/60000] CC obj/module_54/file_60000.o\n[exit code 2]\n")).toBe(true)
            expect(model).toMatch(
              /\[… lines 11–19,999 of 60,004 omitted \([\d,]+ chars\)\. Retrieve them with output \{"id": "s1", "offset": 11, "limit": 200\}/
            )

            // The `output` tool still gets the middle back, from the file.
            const middle = yield* run("o2", "output", { id: "s1", offset: 30_000, limit: 3 })
            expect(middle.modelOutput).toContain("30000\t[29999/60000] CC obj/module_26/file_29999.o")
            const found = yield* run("o3", "output", { id: "s1", pattern: "parser\\.c:412" })
            expect(found.modelOutput).toContain("20001\tsrc/deep/parser.c:412:9")
          }),
        { storeBytes: 1024 * 1024 }
      ),
    120_000
  )
})

import { readFileSync } from "node:fs"
import { NodeServices } from "@effect/platform-node"
import { describe, expect, it } from "@effect/vitest"
import { ConfigProvider, Context, Deferred, Effect, Exit, Fiber, FileSystem, Layer, Scope, Stream } from "effect"
import { testToolSystem } from "../../layers/test.ts"
import { ToolEvents } from "../../src/events/events.ts"
import { Orchestrator } from "../../src/orchestrator/orchestrator.ts"
import type { OutputSettings } from "../../src/output/config.ts"
import { BashTool } from "../../src/tools/bash.ts"
import { OutputTool } from "../../src/tools/output.ts"

const system = (root: string, output: Partial<OutputSettings> = {}) =>
  testToolSystem({ root, tools: [BashTool, OutputTool], output })

/** A temp project; the tool system runs there. */
const withProject = <A, E>(
  body: (root: string) => Effect.Effect<A, E, Orchestrator>,
  output: Partial<OutputSettings> = {},
  env?: Record<string, string>
) =>
  Effect.gen(function* () {
    const fs = yield* FileSystem.FileSystem
    const root = yield* fs.realPath(yield* fs.makeTempDirectoryScoped({ prefix: "freecode-bash-" }))
    const layer =
      env === undefined
        ? system(root, output)
        : system(root, output).pipe(Layer.provide(ConfigProvider.layer(ConfigProvider.fromEnv({ env }))))
    return yield* body(root).pipe(Effect.provide(layer))
  }).pipe(Effect.provide(NodeServices.layer))

const bash = (args: Record<string, unknown>, id = "b1") =>
  Orchestrator.use((o) => o.execute({ id, name: "bash", args }, { sessionId: "s" }))

/** Dead, or a zombie nobody has reaped yet (it no longer runs). */
const isGone = (pid: number): boolean => {
  try {
    process.kill(pid, 0)
  } catch {
    return true
  }
  try {
    return readFileSync(`/proc/${pid}/stat`, "utf8").split(") ")[1]?.startsWith("Z") ?? true
  } catch {
    return true
  }
}

const waitGone = (pids: ReadonlyArray<number>) =>
  Effect.gen(function* () {
    for (let i = 0; i < 50 && !pids.every(isGone); i++) yield* Effect.sleep("100 millis")
    return pids.filter((p) => !isGone(p))
  })

const readPids = (file: string) =>
  readFileSync(file, "utf8")
    .split(/\s+/)
    .filter((s) => s !== "")
    .map(Number)

describe("bash", () => {
  it.live(
    "runs in the project root; stdout and stderr interleave in the order written; a non-zero exit is reported",
    () =>
      withProject((root) =>
        Effect.gen(function* () {
          const result = yield* bash({
            command: "pwd; for i in 1 2 3; do echo out$i; echo err$i >&2; done; exit 3"
          })
          expect(result.status).toBe("ok")
          expect(result.modelOutput).toBe(`${root}\nout1\nerr1\nout2\nerr2\nout3\nerr3\n[exit code 3]\n`)
          expect(result.metadata).toMatchObject({ exitCode: 3, outputKind: "other" })
          expect(result.outputId).toBe("b1")
          expect(result.title).toContain("pwd")
        })
      ),
    30_000
  )

  it.live(
    "a missing description never fails the call; a given one becomes the title",
    () =>
      withProject(() =>
        Effect.gen(function* () {
          const plain = yield* bash({ command: "printf 'no newline'" })
          expect(plain).toMatchObject({ status: "ok", modelOutput: "no newline", metadata: { exitCode: 0 } })
          const described = yield* bash({ command: "true", description: "Do nothing" })
          expect(described).toMatchObject({ status: "ok", title: "Do nothing", modelOutput: "(no output)\n" })
          const failedQuietly = yield* bash({ command: "printf partial; false" })
          expect(failedQuietly.modelOutput).toBe("partial\n[exit code 1]\n")
        })
      ),
    30_000
  )

  it.live(
    "stdin is closed: a command waiting on input gets EOF at once",
    () =>
      withProject(() =>
        Effect.gen(function* () {
          // Waiting on an open stdin would end in the 20 s timeout (status "timeout"), so "ok" is the proof.
          const result = yield* bash({ command: 'cat; read -r line; echo "got:[$line] rc=$?"', timeout: 20_000 })
          expect(result.status).toBe("ok")
          expect(result.modelOutput).toBe("got:[] rc=1\n")
        })
      ),
    30_000
  )

  it.live(
    "a background child holding stdout does not hold the call, and is killed when the shell exits",
    () =>
      withProject((root) =>
        Effect.gen(function* () {
          const started = Date.now()
          const result = yield* bash({ command: `sleep 100 & echo $! > ${root}/bg.pid; echo hi` })
          const elapsed = Date.now() - started
          expect(result).toMatchObject({ status: "ok", modelOutput: "hi\n" })
          // Far below the child's 100 s, with room for a loaded machine.
          expect(elapsed).toBeLessThan(20_000)
          expect(yield* waitGone(readPids(`${root}/bg.pid`))).toEqual([])
        })
      ),
    30_000
  )

  it.live(
    "a timeout is a failure with the partial output, and kills every process of the command by pid",
    () =>
      withProject((root) =>
        Effect.gen(function* () {
          // A child and a grandchild (a shell inside the shell) each start a sleeper.
          const command = [
            `sleep 300 & echo $! >> ${root}/pids`,
            `bash -c 'sleep 300 & echo $! >> ${root}/pids; wait' &`,
            `echo $$ >> ${root}/pids`,
            "echo before-timeout",
            "wait"
          ].join("\n")
          const started = Date.now()
          const result = yield* bash({ command, timeout: 1_000 })
          // Far below the sleepers' 300 s, with room for a loaded machine.
          expect(Date.now() - started).toBeLessThan(20_000)
          expect(result.status).toBe("timeout")
          expect(result.error?.tag).toBe("ToolTimeout")
          expect(result.modelOutput).toBe(
            'bash timed out after 1s (a server, a watcher or a longer job: run it with "run_in_background": true and follow it with the job tool); the output so far follows.\nbefore-timeout\n'
          )
          const pids = readPids(`${root}/pids`)
          expect(pids.length).toBe(3)
          expect(yield* waitGone(pids)).toEqual([])
        })
      ),
    30_000
  )

  it.live(
    "a cancel ends the process and returns what it printed",
    () =>
      withProject((root) =>
        Effect.gen(function* () {
          const orchestrator = yield* Orchestrator
          const cancel = yield* Deferred.make<void>()
          // Cancelled once its output is seen, not after a pause: "working" follows both pids.
          const working = yield* Deferred.make<void>()
          let seen = ""
          const fiber = yield* Effect.forkChild(
            orchestrator.execute(
              {
                id: "c",
                name: "bash",
                args: { command: `echo $$ > ${root}/pid; sleep 200 & echo $! >> ${root}/pid; echo working; wait` }
              },
              {
                sessionId: "s",
                cancelled: Deferred.await(cancel),
                onOutput: (chunk) => {
                  seen += chunk
                  if (seen.includes("working\n")) Deferred.doneUnsafe(working, Effect.void)
                }
              }
            )
          )
          yield* Deferred.await(working)
          yield* Deferred.succeed(cancel, undefined)
          const result = yield* Fiber.join(fiber)
          expect(result.status).toBe("interrupted")
          expect(result.modelOutput).toBe("bash was cancelled by the person; the output so far follows.\nworking\n")
          expect(yield* waitGone(readPids(`${root}/pid`))).toEqual([])
        })
      ),
    30_000
  )

  it.live(
    "the timeout argument is milliseconds, bounded by FREECODE_BASH_MAX_TIMEOUT_MS; bad arguments say what to send",
    () =>
      withProject(
        () =>
          Effect.gen(function* () {
            const tooLong = yield* bash({ command: "true", timeout: 5_001 })
            expect(tooLong.status).toBe("error")
            expect(tooLong.modelOutput).toContain("timeout: must be at most 5000 ms, got 5001")
            const zero = yield* bash({ command: "true", timeout: 0 })
            expect(zero.status).toBe("error")
            expect(zero.modelOutput).toContain("timeout")
            const empty = yield* bash({ command: "  " })
            expect(empty.modelOutput).toContain("command: is empty")
            const quoted = yield* bash({ command: "sleep 2", timeout: "300" })
            expect(quoted.status).toBe("timeout")
            expect(quoted.modelOutput).toContain("timed out after 300ms")
          }),
        {},
        { FREECODE_BASH_MAX_TIMEOUT_MS: "5000" }
      ),
    30_000
  )

  it.live("declares itself a mutating shell that is never retried and never runs beside other calls", () =>
    Effect.sync(() => {
      expect(BashTool).toMatchObject({
        id: "bash",
        mutates: true,
        retrySafe: false,
        concurrencySafe: false,
        interruptBehavior: "cancel",
        operations: ["shell.exec"]
      })
      expect(Object.keys(BashTool.inputSchema.properties ?? {})).toEqual([
        "command",
        "timeout",
        "description",
        "run_in_background",
        "dangerouslyDisableSandbox"
      ])
    })
  )

  it.live(
    "an output larger than the store's memory budget spills to a store-owned file, still readable with output",
    () =>
      withProject(
        () =>
          Effect.gen(function* () {
            // 300,000 numbered lines, ~2 MB, against a 1 MB store budget.
            const result = yield* bash({ command: "seq 1 300000; echo done >&2" }, "big")
            expect(result.status).toBe("ok")
            expect(result.outputLines).toBe(300_001)
            expect(result.outputChars).toBe(1_988_895 + 5)
            expect(result.truncated).toBe(true)
            expect(result.modelOutput.startsWith("1\n2\n3\n")).toBe(true)
            expect(result.modelOutput.endsWith("299999\n300000\ndone\n")).toBe(true)
            expect(result.modelOutput).toMatch(/omitted .*Retrieve them with output \{"id": "big", "offset": \d+/)
            expect(result.modelOutput.length).toBeLessThanOrEqual(30_000)
            expect(result.uiOutput.endsWith("300000\ndone\n")).toBe(true)

            const window = yield* Orchestrator.use((o) =>
              o.execute({ id: "w", name: "output", args: { id: "big", offset: 150000, limit: 3 } }, { sessionId: "s" })
            )
            expect(window.status).toBe("ok")
            expect(window.modelOutput).toBe(
              [
                "output of bash call big: 300001 lines, 1988900 chars",
                "150000\t150000",
                "150001\t150001",
                "150002\t150002",
                "(lines 150000–150002 of 300001; continue with offset=150003)"
              ].join("\n")
            )
            const search = yield* Orchestrator.use((o) =>
              o.execute({ id: "q", name: "output", args: { id: "big", pattern: "^2345[67]$" } }, { sessionId: "s" })
            )
            expect(search.modelOutput).toBe(
              [
                "output of bash call big: 300001 lines, 1988900 chars",
                " 23455\t23455",
                " 23456\t23456",
                " 23457\t23457",
                " 23458\t23458"
              ].join("\n")
            )
            const last = yield* Orchestrator.use((o) =>
              o.execute({ id: "l", name: "output", args: { id: "big", offset: 300001 } }, { sessionId: "s" })
            )
            expect(last.modelOutput).toContain("300001\tdone")
          }),
        { storeBytes: 1_000_000 }
      ),
    60_000
  )

  it.live(
    "a UI sees the output while the command runs, as live tool_output windows",
    () =>
      Effect.gen(function* () {
        const fs = yield* FileSystem.FileSystem
        const root = yield* fs.realPath(yield* fs.makeTempDirectoryScoped({ prefix: "freecode-bash-" }))
        const scope = yield* Scope.make()
        const context = yield* Layer.buildWithScope(system(root), scope)
        const seen: Array<{ at: number; chunk: string }> = []
        const stream = yield* Context.get(context, ToolEvents).subscribe.pipe(Scope.provide(scope))
        yield* stream.pipe(
          Stream.runForEach((e) =>
            Effect.sync(() => {
              if (e.type === "tool_output" && e.phase === "live") seen.push({ at: Date.now(), chunk: e.chunk })
            })
          ),
          Effect.forkIn(scope)
        )
        const started = Date.now()
        const result = yield* bash({ command: "echo first; sleep 1.5; echo second" }).pipe(Effect.provide(context))
        const finished = Date.now()
        yield* Scope.close(scope, Exit.void)
        expect(result.modelOutput).toBe("first\nsecond\n")
        const first = seen.find((s) => s.chunk.includes("first"))
        expect(first).toBeDefined()
        // It arrived while the command was still sleeping, not with the result.
        expect(first!.at - started).toBeLessThan(finished - started - 700)
        expect(seen.map((s) => s.chunk).join("")).toBe("first\nsecond\n")
      }).pipe(Effect.provide(NodeServices.layer)),
    60_000
  )

  it.live(
    "a command printing more than one output may hold on disk is stopped, its first part kept",
    () =>
      withProject(
        () =>
          Effect.gen(function* () {
            const result = yield* bash({ command: "echo $$ > pid; exec yes" }, "y")
            // A stopped command is a failure, said first, with what it printed after.
            expect(result.status).toBe("error")
            expect(result.error?.tag).toBe("ToolFailure")
            expect(result.metadata).toMatchObject({ stopped: true, limitBytes: 3_000_000 })
            expect(result.modelOutput).toMatch(/^stopped: output over 3000000 bytes \(FREECODE_OUTPUT_SPILL_BYTES\)/)
            expect(result.modelOutput).toMatch(/\ny\ny\ny\n/)
            expect(result.modelOutput).toContain("[stopped: output over 3000000 bytes; the command was killed]")
            expect(result.outputChars).toBeGreaterThan(3_000_000)
            const back = yield* Orchestrator.use((o) =>
              o.execute({ id: "o", name: "output", args: { id: "y", offset: 1, limit: 2 } }, { sessionId: "s" })
            )
            expect(back.modelOutput).toContain("were past the spill limit and were not kept")
            expect(back.modelOutput).toMatch(/ 1\ty\n +2\ty/)
          }),
        { storeBytes: 1_000_000 },
        { FREECODE_OUTPUT_SPILL_BYTES: "3000000" }
      ),
    60_000
  )

  it.live(
    "a command writing as fast as the disk takes it is stopped soon after the limit, not after GBs",
    () =>
      withProject(
        () =>
          Effect.gen(function* () {
            // cat /dev/zero writes hundreds of MB to GBs a second; the size is checked on the file itself.
            const result = yield* bash({ command: "cat /dev/zero" }, "z")
            expect(result.status).toBe("error")
            expect(result.modelOutput).toMatch(/^stopped: output over 3000000 bytes/)
            expect(result.metadata).toMatchObject({ stopped: true })
            // What it wrote before the kill landed: the limit plus one check's worth of writing
            // (every 10 ms; measured 1–25 MB quiet, 70 MB once on a loaded CI machine, whose timers
            // run late). The bound is "not GBs": without the check it writes until the timeout.
            expect(result.outputChars).toBeGreaterThan(3_000_000)
            expect(result.outputChars).toBeLessThan(3_000_000 + 512 * 1024 * 1024)
          }),
        { storeBytes: 1_000_000 },
        { FREECODE_OUTPUT_SPILL_BYTES: "3000000" }
      ),
    60_000
  )

  it.live(
    "a command killed by a signal reports it with the shell's exit code",
    () =>
      withProject(() =>
        Effect.gen(function* () {
          const result = yield* bash({ command: "echo before; kill -9 $$" })
          expect(result.status).toBe("ok")
          expect(result.modelOutput).toBe("before\n[killed by SIGKILL; exit code 137]\n")
          expect(result.metadata).toMatchObject({ exitCode: 137, signal: "SIGKILL" })
        })
      ),
    30_000
  )

  it.live(
    "a timeout on an output that spilled keeps all it printed, in the store",
    () =>
      withProject(
        () =>
          Effect.gen(function* () {
            const result = yield* bash({ command: "seq 1 400000; sleep 30", timeout: 3_000 }, "t")
            expect(result.status).toBe("timeout")
            expect(result.outputLines).toBe(400_000)
            expect(result.modelOutput).toMatch(
              /^bash timed out after 3s \(a server, a watcher or a longer job: run it with "run_in_background": true and follow it with the job tool\); the output so far follows\.\n1\n2\n3\n4\n/
            )
            expect(result.modelOutput.endsWith("399999\n400000\n")).toBe(true)
            const back = yield* Orchestrator.use((o) =>
              o.execute({ id: "o", name: "output", args: { id: "t", pattern: "^200000$" } }, { sessionId: "s" })
            )
            expect(back.modelOutput).toContain("200000\t200000")
          }),
        { storeBytes: 1_000_000 }
      ),
    60_000
  )

  const noisy = new URL("../fixtures/logs/noisy-build.log", import.meta.url).pathname
  const buildScript = (root: string) =>
    Effect.gen(function* () {
      const fs = yield* FileSystem.FileSystem
      yield* fs.writeFileString(`${root}/build.sh`, `#!/bin/bash\ncat ${noisy}\nexit 1\n`)
      yield* fs.chmod(`${root}/build.sh`, 0o755)
    })

  it.live(
    "with FREECODE_BASH_COMPRESS=1 a build log keeps its buried errors, with markers naming the output call",
    () =>
      Effect.gen(function* () {
        const fs = yield* FileSystem.FileSystem
        const root = yield* fs.realPath(yield* fs.makeTempDirectoryScoped({ prefix: "freecode-bash-" }))
        yield* buildScript(root)
        const run = bash({ command: "./build.sh 2>&1 | tail -n 100000" })
        const on = yield* run.pipe(
          Effect.provide(
            system(root).pipe(
              Layer.provide(ConfigProvider.layer(ConfigProvider.fromEnv({ env: { FREECODE_BASH_COMPRESS: "1" } })))
            ),
            { local: true }
          )
        )
        expect(on.metadata).toMatchObject({ outputKind: "log", exitCode: 0 })
        expect(on.modelOutput).toContain("src/net/socket.c:88:12: error: use of undeclared identifier 'sockfd'")
        expect(on.modelOutput).toContain("ld: error: undefined symbol: tls_handshake_finish")
        expect(on.modelOutput).toContain("FAILED: obj/crypto/aes.o (exit status 1)")
        expect(on.modelOutput).toContain('Retrieve them with output {"id": "b1", "offset": 11, "limit": 200}')
        expect(on.modelOutput.length).toBeLessThan(10_000)
        expect(on.outputChars).toBe(readFileSync(noisy, "utf8").length)

        const off = yield* run.pipe(Effect.provide(system(root), { local: true }))
        expect(off.metadata).toMatchObject({ outputKind: "log" })
        expect(off.modelOutput).not.toContain("tls_handshake_finish")
      }).pipe(Effect.provide(NodeServices.layer)),
    30_000
  )
})

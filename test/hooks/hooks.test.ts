/** PreToolUse / PostToolUse with real hook scripts, through the Dispatcher. */
import * as NodeFs from "node:fs"
import { afterAll, describe, expect, it } from "@effect/vitest"
import { Effect, Option } from "effect"
import type { FreecodeConfigData } from "../../layers/config.ts"
import { Dispatcher } from "../../src/dispatch/dispatcher.ts"
import type { HookOutcome } from "../../src/hooks/hooks.ts"
import { OutputStore } from "../../src/output/store.ts"
import type { ApprovalQuestion } from "../../src/permission/approval.ts"
import { BashTool } from "../../src/tools/bash.ts"
import { Look, makeRoot, system, Touch } from "../dispatch/helpers.ts"

const project = makeRoot()
afterAll(project.cleanup)
const { root } = project
const script = (name: string, body: string) => {
  NodeFs.mkdirSync(`${root}/hooks`, { recursive: true })
  NodeFs.writeFileSync(`${root}/hooks/${name}`, `#!/bin/bash\n${body}\n`, { mode: 0o755 })
  return `${root}/hooks/${name}`
}
const json = (value: unknown) => `echo '${JSON.stringify(value)}'`
const pre = (matcher: string, command: string, timeout?: number) => ({
  matcher,
  hooks: [{ type: "command" as const, command, ...(timeout === undefined ? {} : { timeout }) }]
})

const BLOCK = script("block.sh", `cat > "${root}/pre-input.json"\necho "no writes to prod" >&2\nexit 2`)
const REWRITE = script(
  "rewrite.sh",
  `cat > /dev/null\n${json({ hookSpecificOutput: { hookEventName: "PreToolUse", updatedInput: { command: "echo rewritten" } } })}`
)
const REWRITE_RM = script(
  "rewrite-rm.sh",
  `cat > /dev/null\n${json({ hookSpecificOutput: { updatedInput: { command: "rm -rf src" } } })}`
)
const CONTEXT = script(
  "context.sh",
  `cat > /dev/null\n${json({ hookSpecificOutput: { hookEventName: "PreToolUse", additionalContext: "remember the style guide" } })}`
)
const SLOW = script("slow.sh", `sleep 4\ntouch "${root}/slow-hook-finished"`)
const BAD_JSON = script("bad-json.sh", `cat > /dev/null\necho '{"hookSpecificOutput": {'`)
const ASK = script(
  "ask.sh",
  `cat > /dev/null\n${json({ hookSpecificOutput: { permissionDecision: "ask", permissionDecisionReason: "hook wants a person" } })}`
)
const CRASH = script("crash.sh", `echo boom >&2\nexit 1`)
const POST = script(
  "post.sh",
  `cat > "${root}/post-input.json"\n${json({ hookSpecificOutput: { hookEventName: "PostToolUse", additionalContext: "post says hi" } })}`
)
const ALLOW = script(
  "allow.sh",
  `cat > /dev/null\n${json({ hookSpecificOutput: { permissionDecision: "allow", permissionDecisionReason: "hook vouches" } })}`
)
const DENY_JSON = script(
  "deny.sh",
  `cat > /dev/null\n${json({ hookSpecificOutput: { permissionDecision: "deny", permissionDecisionReason: "json says no" } })}`
)

const tools = [Touch, Look, BashTool]
const withHooks = (config: FreecodeConfigData, asked: Array<ApprovalQuestion> = []) =>
  system({ root, tools, config, answer: { answer: "once" }, asked })
const hooksOf = (metadata: Record<string, unknown>) => metadata.hooks as ReadonlyArray<HookOutcome>
const exists = (rel: string) => NodeFs.existsSync(`${root}/${rel}`)

describe("hooks", () => {
  it.live("exit 2 blocks: stderr reaches the model, the tool does not run, the hook got the event on stdin", () =>
    Effect.gen(function* () {
      const d = yield* Dispatcher
      const r = yield* d.dispatch({ id: "b1", name: "touch", args: { filePath: "prod.txt" } }, { sessionId: "hs" })
      expect(r.status).toBe("denied")
      expect(r.modelOutput).toContain("no writes to prod")
      expect(exists("prod.txt")).toBe(false)
      expect(hooksOf(r.metadata)[0]).toMatchObject({ event: "PreToolUse", outcome: "deny" })
      const input = JSON.parse(NodeFs.readFileSync(`${root}/pre-input.json`, "utf8"))
      expect(input).toEqual({
        session_id: "hs",
        cwd: root,
        hook_event_name: "PreToolUse",
        tool_name: "touch",
        tool_input: { filePath: "prod.txt" },
        tool_use_id: "b1"
      })
      // The matcher is a regular expression over the tool name: look is not guarded.
      expect((yield* d.dispatch({ id: "b2", name: "look", args: { n: 1 } }, { sessionId: "hs" })).status).toBe("ok")
    }).pipe(Effect.provide(withHooks({ hooks: { PreToolUse: [pre("touch|write", BLOCK)] } })))
  )

  // bash sources ~/.bashrc for `-c` when its stdin is a socket and SHLVL is unset or 1 — as for
  // a server an MCP client started with a bare environment.
  it.live("a command hook runs without the person's ~/.bashrc (bash reads it for -c when stdin is a socket)", () => {
    const home = NodeFs.mkdtempSync(`${root}/home-`)
    NodeFs.writeFileSync(`${home}/.bashrc`, `touch "${root}/bashrc-ran"\n`)
    const before = { HOME: process.env.HOME, SHLVL: process.env.SHLVL }
    return Effect.gen(function* () {
      process.env.HOME = home
      delete process.env.SHLVL
      const d = yield* Dispatcher
      const r = yield* d.dispatch({ id: "rc1", name: "look", args: { n: 1 } }, { sessionId: "rc" })
      expect(r.status).toBe("ok")
      expect(exists("hook-ran")).toBe(true)
      expect(exists("bashrc-ran")).toBe(false)
    }).pipe(
      Effect.ensuring(
        Effect.sync(() => {
          for (const [k, v] of Object.entries(before)) {
            if (v === undefined) delete process.env[k]
            else process.env[k] = v
          }
        })
      ),
      Effect.provide(withHooks({ hooks: { PreToolUse: [pre("look", `cat > /dev/null; touch "${root}/hook-ran"`)] } }))
    )
  })

  it.live("updatedInput rewrites the call", () =>
    Effect.gen(function* () {
      const d = yield* Dispatcher
      const r = yield* d.dispatch({ id: "r1", name: "bash", args: { command: "echo original" } }, { sessionId: "s" })
      expect(r.status).toBe("ok")
      expect(r.modelOutput).toBe("rewritten\n")
      expect(hooksOf(r.metadata)[0]).toMatchObject({ outcome: "continue", updatedInput: true })
    }).pipe(
      Effect.provide(
        withHooks({ permissions: { allow: ["Bash(echo:*)"] }, hooks: { PreToolUse: [pre("Bash", REWRITE)] } })
      )
    )
  )

  it.live("a rewritten input is checked against the rules again: a hook cannot route around a deny", () =>
    Effect.gen(function* () {
      NodeFs.mkdirSync(`${root}/src`, { recursive: true })
      const d = yield* Dispatcher
      const r = yield* d.dispatch({ id: "r2", name: "bash", args: { command: "echo original" } }, { sessionId: "s" })
      expect(r.status).toBe("denied")
      expect(r.modelOutput).toContain("Bash(rm:*) denies")
      expect(exists("src")).toBe(true)
    }).pipe(
      Effect.provide(
        withHooks({
          permissions: { allow: ["Bash(echo:*)", "Bash(rm:*)"], deny: ["Bash(rm:*)"] },
          hooks: { PreToolUse: [pre("Bash", REWRITE_RM)] }
        })
      )
    )
  )

  it.live("additionalContext (Pre) and PostToolUse context reach the model; Post gets the result", () =>
    Effect.gen(function* () {
      const d = yield* Dispatcher
      const r = yield* d.dispatch({ id: "c1", name: "look", args: { n: 7 } }, { sessionId: "s" })
      expect(r.status).toBe("ok")
      expect(r.modelOutput).toBe("looked 7\n\n[hook] remember the style guide\n\n[hook] post says hi")
      expect(hooksOf(r.metadata).map((h) => h.event)).toEqual(["PreToolUse", "PostToolUse"])
      const post = JSON.parse(NodeFs.readFileSync(`${root}/post-input.json`, "utf8"))
      expect(post).toMatchObject({
        hook_event_name: "PostToolUse",
        tool_name: "look",
        tool_input: { n: 7 },
        tool_response: { status: "ok", output: "looked 7" }
      })
    }).pipe(Effect.provide(withHooks({ hooks: { PreToolUse: [pre("look", CONTEXT)], PostToolUse: [pre("*", POST)] } })))
  )

  it.live(
    "a PreToolUse hook that times out blocks the call and is reported",
    () =>
      Effect.gen(function* () {
        const d = yield* Dispatcher
        const started = Date.now()
        const r = yield* d.dispatch({ id: "t", name: "touch", args: { filePath: "slow.txt" } }, { sessionId: "s" })
        expect(Date.now() - started).toBeLessThan(6_000)
        expect(r.status).toBe("denied")
        expect(r.modelOutput).toContain("did not answer within")
        expect(hooksOf(r.metadata)[0]).toMatchObject({ outcome: "timed out" })
        expect(exists("slow.txt")).toBe(false)
        // The hook was killed, not left running: it never gets to its last line.
        yield* Effect.sleep("5 seconds")
        expect(exists("slow-hook-finished")).toBe(false)
      }).pipe(Effect.provide(withHooks({ hooks: { PreToolUse: [pre("touch", SLOW, 1)] } }))),
    20_000
  )

  it.live("a crashing PreToolUse hook blocks (fail closed); a crashing PostToolUse hook is only reported", () =>
    Effect.gen(function* () {
      const d = yield* Dispatcher
      const r = yield* d.dispatch({ id: "x1", name: "touch", args: { filePath: "crash.txt" } }, { sessionId: "s" })
      expect(r.status).toBe("denied")
      expect(r.modelOutput).toContain("exited with code 1: boom")
      expect(exists("crash.txt")).toBe(false)
      const l = yield* d.dispatch({ id: "x2", name: "look", args: { n: 1 } }, { sessionId: "s" })
      expect(l.status).toBe("ok")
      expect(l.modelOutput).toBe("looked 1")
      expect(hooksOf(l.metadata)).toMatchObject([{ event: "PostToolUse", outcome: "crashed" }])
    }).pipe(
      Effect.provide(withHooks({ hooks: { PreToolUse: [pre("touch", CRASH)], PostToolUse: [pre("look", CRASH)] } }))
    )
  )

  it.live("a PreToolUse hook that prints invalid JSON counts as a crash: the call does not run", () =>
    Effect.gen(function* () {
      const d = yield* Dispatcher
      const r = yield* d.dispatch({ id: "bj", name: "touch", args: { filePath: "bad-json.txt" } }, { sessionId: "s" })
      expect(r.status).toBe("denied")
      expect(r.modelOutput).toContain("printed invalid JSON")
      expect(hooksOf(r.metadata)[0]).toMatchObject({ event: "PreToolUse", outcome: "crashed" })
      expect(exists("bad-json.txt")).toBe(false)
    }).pipe(Effect.provide(withHooks({ hooks: { PreToolUse: [pre("touch", BAD_JSON)] } })))
  )

  it.live("a JSON ask sends a call the rules allow to the person; their no keeps it from running", () => {
    const asked: Array<ApprovalQuestion> = []
    return Effect.gen(function* () {
      const d = yield* Dispatcher
      const r = yield* d.dispatch(
        { id: "ak", name: "bash", args: { command: "echo hi > asked-by-hook.txt" } },
        { sessionId: "s" }
      )
      expect(asked).toHaveLength(1)
      expect(asked[0]!.reason).toBe("hook wants a person")
      expect(r.status).toBe("denied")
      expect(r.modelOutput).toBe("not now")
      expect(r.metadata.permission).toMatchObject({ behavior: "deny", by: "person" })
      expect(exists("asked-by-hook.txt")).toBe(false)
    }).pipe(
      Effect.provide(
        system({
          root,
          tools,
          config: { permissions: { allow: ["Bash"] }, hooks: { PreToolUse: [pre("bash", ASK)] } },
          answer: { answer: "deny", message: "not now" },
          asked
        })
      )
    )
  })

  it.live(
    "JSON decisions: allow vouches for a call the declaration would ask about, never past an ask rule; deny refuses",
    () => {
      const asked: Array<ApprovalQuestion> = []
      return Effect.gen(function* () {
        const d = yield* Dispatcher
        const a = yield* d.dispatch({ id: "j1", name: "touch", args: { filePath: "vouched.txt" } }, { sessionId: "s" })
        expect(a.status).toBe("ok")
        expect(a.metadata.permission).toMatchObject({ by: "hook" })
        expect(asked).toHaveLength(0)
        const b = yield* d.dispatch({ id: "j2", name: "touch", args: { filePath: "asked.txt" } }, { sessionId: "s" })
        expect(b.status).toBe("ok")
        expect(asked).toHaveLength(1)
        const c = yield* d.dispatch({ id: "j3", name: "bash", args: { command: "echo hi" } }, { sessionId: "s" })
        expect(c.status).toBe("denied")
        expect(c.modelOutput).toContain("json says no")
      }).pipe(
        Effect.provide(
          withHooks(
            {
              permissions: { ask: ["Touch(asked.txt)"], allow: ["Bash"] },
              hooks: { PreToolUse: [pre("touch", ALLOW), pre("bash", DENY_JSON)] }
            },
            asked
          )
        )
      )
    }
  )

  it.live("an Effect-function PreToolUse hook that fails or dies blocks the call (fail closed)", () =>
    Effect.gen(function* () {
      const d = yield* Dispatcher
      for (const filePath of ["fails.txt", "dies.txt"]) {
        const r = yield* d.dispatch({ id: filePath, name: "touch", args: { filePath } }, { sessionId: "s" })
        expect(r.status).toBe("denied")
        expect(hooksOf(r.metadata)[0]).toMatchObject({ event: "PreToolUse", outcome: "crashed" })
        expect(r.modelOutput).toContain("the call was not run")
        expect(exists(filePath)).toBe(false)
      }
    }).pipe(
      Effect.provide(
        system({
          root,
          tools,
          answer: { answer: "once" },
          hooks: [
            {
              event: "PreToolUse",
              name: "flaky",
              matcher: "touch",
              run: (input) =>
                (input.tool_input as { filePath: string }).filePath === "fails.txt"
                  ? Effect.fail("policy server unreachable")
                  : Effect.die(new Error("bug in the hook"))
            }
          ]
        })
      )
    )
  )

  it.live("Effect-function hooks for embedders run beside the configured ones", () =>
    Effect.gen(function* () {
      const d = yield* Dispatcher
      const r = yield* d.dispatch({ id: "f", name: "touch", args: { filePath: "fn.txt" } }, { sessionId: "s" })
      expect(r.status).toBe("denied")
      expect(r.modelOutput).toContain("function hook says no to fn.txt")
    }).pipe(
      Effect.provide(
        system({
          root,
          tools,
          answer: { answer: "once" },
          hooks: [
            {
              event: "PreToolUse",
              name: "guard",
              matcher: "touch",
              run: (input) =>
                Effect.succeed({
                  decision: "deny" as const,
                  reason: `function hook says no to ${(input.tool_input as { filePath: string }).filePath}`
                })
            }
          ]
        })
      )
    )
  )

  const LOUD = script("loud.sh", `cat > /dev/null\nyes "the hook has a lot to say about this call" | head -c 300000`)
  it.live("a hook printing far more than the budget: the model's copy stays within it, the whole text is stored", () =>
    Effect.gen(function* () {
      const d = yield* Dispatcher
      const store = yield* OutputStore
      const r = yield* d.dispatch({ id: "loud", name: "look", args: { n: 3 } }, { sessionId: "hb" })
      expect(r.status).toBe("ok")
      expect(r.modelOutput.length).toBeLessThanOrEqual(10_000)
      expect(r.truncated).toBe(true)
      expect(r.modelOutput.startsWith("looked 3\n\n[hook] the hook has a lot to say")).toBe(true)
      // The marker names the stored hook text, and all of it is there.
      expect(r.modelOutput).toContain(`output {"id": "loud.hooks"`)
      const stored = yield* store.get("hb", "loud.hooks")
      expect(Option.isSome(stored)).toBe(true)
      const text = Option.getOrThrow(stored).text
      expect(text.length).toBe("[hook] ".length + 300_000)
      expect(text.startsWith("[hook] the hook has a lot to say about this call\n")).toBe(true)
      // The tool's own output is stored under the call id, as always.
      expect(r.outputId).toBe("loud")
      expect(Option.getOrThrow(yield* store.get("hb", "loud")).text).toBe("looked 3")
    }).pipe(
      Effect.provide(
        system({
          root,
          tools,
          answer: { answer: "once" },
          output: { maxChars: 10_000 },
          config: { hooks: { PostToolUse: [pre("look", LOUD)] } }
        })
      )
    )
  )

  it.live("a long one-line hook context and a tool output over budget share it: both cut, the sum within", () =>
    Effect.gen(function* () {
      const d = yield* Dispatcher
      const store = yield* OutputStore
      const r = yield* d.dispatch({ id: "wide", name: "bash", args: { command: "seq 1 20000" } }, { sessionId: "hw" })
      expect(r.status).toBe("ok")
      expect(r.modelOutput.length).toBeLessThanOrEqual(10_000)
      expect(r.truncated).toBe(true)
      expect(r.modelOutput).toContain("[hook] xxxx")
      expect(r.modelOutput).toContain(`output {"id": "wide"`)
      expect(Option.getOrThrow(yield* store.get("hw", "wide")).text.split("\n").length).toBe(20_001)
      expect(Option.getOrThrow(yield* store.get("hw", "wide.hooks")).text).toBe(`[hook] ${"x".repeat(50_000)}`)
    }).pipe(
      Effect.provide(
        system({
          root,
          tools,
          answer: { answer: "once" },
          output: { maxChars: 10_000 },
          hooks: [
            {
              event: "PreToolUse",
              name: "wide",
              run: () => Effect.succeed({ additionalContext: "x".repeat(50_000) })
            }
          ]
        })
      )
    )
  )
})

/**
 * The `code` tool through the real Dispatcher: nested calls take the one path (rules, hooks,
 * approvals, events, the store), run in program order, and come back as values.
 */
import * as NodeFs from "node:fs"
import * as NodePath from "node:path"
import { afterAll, describe, expect, it } from "@effect/vitest"
import { Effect } from "effect"
import type { HookInput } from "../../src/hooks/hooks.ts"
import type { ApprovalQuestion } from "../../src/permission/approval.ts"
import { codeSystem, makeProject, runCode, stored, withEvents } from "./system.ts"

const root = makeProject({
  "a.txt": "alpha\nbeta\n",
  "b.txt": "gamma\n",
  "big.txt": Array.from({ length: 5000 }, (_, i) => `line ${i} ${"x".repeat(40)}`).join("\n"),
  ".env": "SECRET=hunter2\n"
})
afterAll(() => NodeFs.rmSync(root, { recursive: true, force: true }))

describe("code: nested calls are values", () => {
  it.live("reads a file, prints, returns; the output is the program's, the call list is in metadata", () =>
    Effect.gen(function* () {
      const ctx = yield* codeSystem(root)
      const r = yield* runCode(
        ctx,
        `const r = await tools.read({ filePath: "a.txt" }); console.log(r.status, r.tool); return r.output.includes("beta")`
      )
      expect(r.status).toBe("ok")
      expect(r.modelOutput).toContain("ok read")
      expect(r.modelOutput).toContain("true")
      expect(r.modelOutput).toContain("[1 tool call: 1 ok]")
      const calls = r.metadata.calls as ReadonlyArray<{ id: string; status: string }>
      expect(calls).toEqual([{ id: `${r.id}.1`, tool: "read", status: "ok" }])
      // The nested result is stored under its own id, and never entered the program's output on its own.
      expect(yield* stored(ctx, `${r.id}.1`)).toContain("beta")
      expect(r.modelOutput).not.toContain("alpha")
    })
  )

  it.live("hands the program the FULL output, not the model's cut copy", () =>
    Effect.gen(function* () {
      const ctx = yield* codeSystem(root)
      const r = yield* runCode(
        ctx,
        `const r = await tools.bash({ command: "cat big.txt", description: "cat" }); return r.output.split("\\n").filter(l => l.startsWith("line ")).length`
      )
      expect(r.status).toBe("ok")
      expect(r.modelOutput.split("\n")[0]).toBe("5000")
    })
  )

  it.live("TypeScript types are stripped", () =>
    Effect.gen(function* () {
      const ctx = yield* codeSystem(root)
      const r = yield* runCode(ctx, `const n: number = 2; const f = (x: string): string => x + n; return f("v")`)
      expect(r.modelOutput).toContain("v2")
    })
  )
})

describe("code: the same rules as a direct call", () => {
  it.live("a deny rule refuses the nested call with a ToolError the program catches; the result lists it", () =>
    Effect.gen(function* () {
      const ctx = yield* codeSystem(root, { config: { permissions: { deny: ["Read(./.env)"] } } })
      const r = yield* runCode(
        ctx,
        `try { await tools.read({ filePath: ".env" }); return "read it" } catch (e) { return [e.name, e.status, e instanceof ToolError].join(" ") }`
      )
      expect(r.status).toBe("ok")
      expect(r.modelOutput).toContain("ToolError denied true")
      expect(r.modelOutput).toMatch(/1 denied/)
      expect(r.modelOutput).toContain("read denied")
      expect(r.modelOutput).not.toContain("hunter2")
    })
  )

  it.live("the read-only profile reaches only read-only tools: bash and write are absent, and refused by name", () =>
    Effect.gen(function* () {
      const ctx = yield* codeSystem(root)
      const r = yield* runCode(
        ctx,
        `const out = []
         out.push(typeof tools.bash, typeof tools.write)
         for (const f of [() => tools.call("bash", { command: "touch pwned", description: "x" }), () => tools.call("write", { filePath: "w.txt", content: "x" })]) {
           try { await f(); out.push("ran") } catch (e) { out.push(e.status) }
         }
         return out.join(",")`,
        "read-only"
      )
      expect(r.modelOutput.split("\n")[0]).toBe("undefined,undefined,denied,denied")
      expect(NodeFs.existsSync(NodePath.join(root, "pwned"))).toBe(false)
      expect(NodeFs.existsSync(NodePath.join(root, "w.txt"))).toBe(false)
    })
  )

  it.live(
    "PreToolUse and PostToolUse hooks see each nested call with the program's call id; a deny hook refuses it",
    () =>
      Effect.gen(function* () {
        const seen: Array<HookInput> = []
        const ctx = yield* codeSystem(root, {
          hooks: [
            {
              event: "PreToolUse",
              name: "deny-b",
              matcher: ".*",
              run: (input) =>
                Effect.sync(() => {
                  seen.push(input)
                  const args = input.tool_input as { filePath?: string }
                  return args.filePath === "b.txt" ? { decision: "deny" as const, reason: "not b" } : {}
                })
            },
            {
              event: "PostToolUse",
              name: "post",
              matcher: ".*",
              run: (input) =>
                Effect.sync(() => {
                  seen.push(input)
                  return {}
                })
            }
          ]
        })
        const r = yield* runCode(
          ctx,
          `const a = await tools.read({ filePath: "a.txt" }); let b; try { await tools.read({ filePath: "b.txt" }); b = "ran" } catch (e) { b = e.status + ": " + e.message } return b`
        )
        expect(r.modelOutput).toContain("denied: A PreToolUse hook blocked this call: not b")
        const nested = seen.filter((h) => h.tool_name === "read")
        expect(nested.map((h) => [h.hook_event_name, h.parent_tool_use_id])).toEqual([
          ["PreToolUse", r.id],
          ["PostToolUse", r.id],
          ["PreToolUse", r.id]
        ])
        // The program's own call has no parent.
        expect(seen.find((h) => h.tool_name === "code")?.parent_tool_use_id).toBeUndefined()
      })
  )

  it.live("a nested call that needs approval suspends the program while the person is asked; it runs once", () =>
    Effect.gen(function* () {
      const asked: Array<ApprovalQuestion> = []
      const ctx = yield* codeSystem(root, { answer: { answer: "once" }, asked })
      const r = yield* runCode(
        ctx,
        `const r = await tools.bash({ command: "echo run >> ran.log", description: "append" }); return r.status`
      )
      expect(r.modelOutput.split("\n")[0]).toBe("ok")
      expect(asked.length).toBe(1)
      expect(NodeFs.readFileSync(NodePath.join(root, "ran.log"), "utf8")).toBe("run\n")
    })
  )

  it.live("events of nested calls carry the program's call id", () =>
    Effect.gen(function* () {
      const ctx = yield* codeSystem(root)
      const { result, events } = yield* withEvents(ctx, runCode(ctx, `await tools.read({ filePath: "a.txt" })`))
      const nested = events.filter((e) => e.tool === "read")
      expect(nested.map((e) => e.type)).toContain("tool_start")
      expect(nested.map((e) => e.type)).toContain("tool_complete")
      expect(nested.every((e) => e.parentCallId === result.id)).toBe(true)
    })
  )
})

describe("code: batching", () => {
  it.live(
    "Promise.all: reads run beside each other, a write waits for every earlier call and holds back later ones",
    () =>
      Effect.gen(function* () {
        const ctx = yield* codeSystem(root, { answer: { answer: "once" } })
        const r = yield* runCode(
          ctx,
          `const log = (s) => tools.bash({ command: "sleep 0.2; echo " + s + " >> order.log", description: s })
         await Promise.all([log("one"), tools.write({ filePath: "mid.txt", content: "m" }), log("two")])
         const r = await tools.read({ filePath: "order.log" })
         return r.output`
        )
        expect(r.status, r.modelOutput).toBe("ok")
        // The write ran after "one" finished and before "two" started.
        expect(NodeFs.readFileSync(NodePath.join(root, "order.log"), "utf8")).toBe("one\ntwo\n")
        const mid = NodeFs.statSync(NodePath.join(root, "mid.txt")).mtimeMs
        expect(mid).toBeGreaterThan(0)
      })
  )
})

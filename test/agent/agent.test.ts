/**
 * The agent tool and its runner, driven by a scripted LanguageModel layer (the model is the one
 * thing that cannot run here): real files, the real Dispatcher, the real permission engine.
 */
import * as NodeFs from "node:fs"
import * as NodeOs from "node:os"
import * as NodePath from "node:path"
import { NodeServices } from "@effect/platform-node"
import { afterAll, describe, expect, it } from "@effect/vitest"
import { ConfigProvider, Context, Effect, Fiber, Layer, Stream } from "effect"
import { LanguageModel } from "effect/ai"
import type { FreecodeConfigData } from "../../layers/config.ts"
import { toolSystem } from "../../layers/system.ts"
import { Dispatcher } from "../../src/dispatch/dispatcher.ts"
import { type ToolEvent, ToolEvents } from "../../src/events/events.ts"
import { OutputConfig } from "../../src/output/config.ts"
import { ToolRegistry } from "../../src/registry/registry.ts"

const root = NodeFs.realpathSync(NodeFs.mkdtempSync(NodePath.join(NodeOs.tmpdir(), "freecode-agent-")))
NodeFs.writeFileSync(NodePath.join(root, "README.md"), "# Demo\nThe answer is 42.\n")
afterAll(() => NodeFs.rmSync(root, { recursive: true, force: true }))

type Part = Record<string, unknown>
interface Turn {
  readonly tools: ReadonlyArray<string>
  /** Every tool result in the prompt, oldest first: id and what the model was given. */
  readonly history: ReadonlyArray<{ readonly id: string; readonly result: string }>
  /** The tool results the model was given on this turn (the last message), as text. */
  readonly results: ReadonlyArray<{ readonly name: string; readonly isFailure: boolean; readonly result: unknown }>
}

/** A LanguageModel that answers with the given turns in order, recording what it was sent. */
const scripted = (turns: ReadonlyArray<ReadonlyArray<Part>>, seen: Array<Turn>) => {
  let next = 0
  return Layer.effect(
    LanguageModel.LanguageModel,
    LanguageModel.make({
      generateText: (options) =>
        Effect.sync(() => {
          const last = options.prompt.content.at(-1)
          seen.push({
            tools: options.tools.map((t) => t.name),
            history: options.prompt.content.flatMap((m) =>
              m.role === "tool"
                ? m.content.flatMap((p) => (p.type === "tool-result" ? [{ id: p.id, result: String(p.result) }] : []))
                : []
            ),
            results:
              last?.role === "tool"
                ? last.content.flatMap((p) =>
                    p.type === "tool-result" ? [{ name: p.name, isFailure: p.isFailure, result: p.result }] : []
                  )
                : []
          })
          const parts = turns[next++] ?? [{ type: "text", text: "(script ran out)" }]
          return [
            ...parts,
            { type: "finish", reason: "stop", usage: { inputTokens: { total: 1 }, outputTokens: { total: 1 } } }
          ] as never
        }),
      streamText: () => Stream.empty
    })
  )
}

const call = (id: string, name: string, params: unknown): Part => ({ type: "tool-call", id, name, params })
const text = (t: string): Part => ({ type: "text", text: t })

const build = (
  turns: ReadonlyArray<ReadonlyArray<Part>> | undefined,
  seen: Array<Turn>,
  config: FreecodeConfigData = {},
  env: Record<string, string> = {},
  maxTurns = 5
) =>
  Layer.build(
    toolSystem({
      root,
      config,
      outputConfig: OutputConfig.layerWith({}),
      sessions: "memory",
      ...(turns === undefined ? {} : { agent: { model: scripted(turns, seen), maxTurns } })
    }).pipe(
      Layer.provideMerge(NodeServices.layer),
      Layer.provide(ConfigProvider.layer(ConfigProvider.fromEnv({ env })))
    )
  )

describe("agent", () => {
  it.live("is not registered without a model to run it", () =>
    Effect.scoped(
      Effect.gen(function* () {
        const context = yield* build(undefined, [])
        const tools = yield* Context.get(context, ToolRegistry).tools
        expect(tools.map((t) => t.id)).not.toContain("agent")
        expect(tools.map((t) => t.id)).toContain("read")
      })
    )
  )

  it.live("an explore child reads through the same Dispatcher under its own session; its reply comes back", () =>
    Effect.scoped(
      Effect.gen(function* () {
        const seen: Array<Turn> = []
        const context = yield* build(
          [[call("r1", "read", { filePath: "README.md" })], [text("The README says the answer is 42.")]],
          seen
        )
        const agent = (yield* Context.get(context, ToolRegistry).tools).find((t) => t.id === "agent")!
        expect({ mutates: agent.mutates, retrySafe: agent.retrySafe }).toEqual({ mutates: true, retrySafe: false })

        const events: Array<ToolEvent> = []
        const stream = yield* Context.get(context, ToolEvents).subscribe
        const collector = yield* Effect.forkScoped(Stream.runForEach(stream, (e) => Effect.sync(() => events.push(e))))
        const result = yield* Context.get(context, Dispatcher).dispatch(
          {
            id: "a1",
            name: "agent",
            args: { description: "find the answer", prompt: "What does README.md say?", subagent_type: "explore" }
          },
          { sessionId: "parent", approve: () => Effect.succeed(true) }
        )
        yield* Effect.sleep("50 millis")
        yield* Fiber.interrupt(collector)

        expect(result.status).toBe("ok")
        expect(result.modelOutput).toBe("The README says the answer is 42.")
        expect(result.metadata).toMatchObject({ sessionId: "parent/agent-a1", turns: 2, toolCalls: 1 })
        // explore is read-only: the child is never even told about edit, write or bash.
        expect(seen[0]!.tools).toContain("read")
        for (const hidden of ["edit", "write", "bash", "agent"]) expect(seen[0]!.tools).not.toContain(hidden)
        expect(seen[1]!.results).toEqual([
          { name: "read", isFailure: false, result: expect.stringContaining("The answer is 42.") }
        ])
        // The child's call is in ToolEvents under the child's session; the agent call under the parent's.
        const starts = events.filter((e) => e.type === "tool_start").map((e) => [e.tool, e.sessionId])
        expect(starts).toEqual([
          ["agent", "parent"],
          ["read", "parent/agent-a1"]
        ])
      })
    )
  )

  it.live("a child that tries to edit under an explore profile is refused, and the file is unchanged", () =>
    Effect.scoped(
      Effect.gen(function* () {
        const seen: Array<Turn> = []
        const context = yield* build(
          [
            [call("e1", "edit", { filePath: "README.md", oldString: "42", newString: "43" })],
            [text("I could not edit it.")]
          ],
          seen
        )
        const result = yield* Context.get(context, Dispatcher).dispatch(
          {
            id: "a2",
            name: "agent",
            args: { description: "edit", prompt: "Change 42 to 43.", subagent_type: "explore" }
          },
          { sessionId: "p", approve: () => Effect.succeed(true) }
        )
        expect(result.modelOutput).toBe("I could not edit it.")
        expect(seen[1]!.results[0]).toMatchObject({ name: "edit", isFailure: true })
        expect(NodeFs.readFileSync(NodePath.join(root, "README.md"), "utf8")).toContain("The answer is 42.")
      })
    )
  )

  it.live(
    "the child's rules are the intersection with the parent's: a general child cannot edit what its parent may not",
    () =>
      Effect.scoped(
        Effect.gen(function* () {
          const seen: Array<Turn> = []
          const context = yield* build(
            [[call("e1", "edit", { filePath: "README.md", oldString: "42", newString: "43" })], [text("Refused.")]],
            seen,
            { profiles: { "no-edits": { deny: ["Edit", "Write"] } } }
          )
          const base = Context.get(context, Dispatcher)
          const parent = yield* base.withProfile("no-edits")
          const result = yield* parent.dispatch(
            {
              id: "a3",
              name: "agent",
              args: { description: "edit", prompt: "Change 42 to 43.", subagent_type: "general" }
            },
            { sessionId: "p", approve: () => Effect.succeed(true) }
          )
          // No CurrentDispatcher provided by hand: the narrowed dispatcher runs its calls as itself.
          expect(result.status).toBe("ok")
          // general keeps the edit tool declared, but the parent's deny rule refuses the call.
          expect(seen[0]!.tools).toContain("edit")
          expect(seen[1]!.results[0]).toMatchObject({ name: "edit", isFailure: true })
          expect(String(seen[1]!.results[0]!.result)).toContain("denies")
          expect(NodeFs.readFileSync(NodePath.join(root, "README.md"), "utf8")).toContain("The answer is 42.")
        })
      )
  )

  it.live("a subagent_type naming a profile from freecode.json runs the child under that profile", () =>
    Effect.scoped(
      Effect.gen(function* () {
        const seen: Array<Turn> = []
        const context = yield* build(
          [
            [
              call("r1", "read", { filePath: "README.md" }),
              call("e1", "edit", { filePath: "README.md", oldString: "42", newString: "43" })
            ],
            [text("Read it; the edit was refused.")]
          ],
          seen,
          { profiles: { reviewer: { tools: ["read", "grep", "edit"], deny: ["Edit"] } } }
        )
        const result = yield* Context.get(context, Dispatcher).dispatch(
          {
            id: "a7",
            name: "agent",
            args: { description: "review", prompt: "Review README.md.", subagent_type: "reviewer" }
          },
          { sessionId: "p", approve: () => Effect.succeed(true) }
        )
        expect(result.status).toBe("ok")
        // The profile's tool filter decides what the child is offered; its deny rule what it may do.
        expect([...seen[0]!.tools].sort()).toEqual(["edit", "grep", "read"])
        expect(seen[1]!.results.find((r) => r.name === "read")).toMatchObject({ isFailure: false })
        const edit = seen[1]!.results.find((r) => r.name === "edit")
        expect(edit).toMatchObject({ isFailure: true })
        expect(String(edit!.result)).toContain("Edit")
        expect(NodeFs.readFileSync(NodePath.join(root, "README.md"), "utf8")).toContain("The answer is 42.")
      })
    )
  )

  it.live("a plan-mode parent's child may look, but its edits and mutating commands are refused", () =>
    Effect.scoped(
      Effect.gen(function* () {
        const seen: Array<Turn> = []
        const context = yield* build(
          [
            [
              call("r1", "read", { filePath: "README.md" }),
              call("e1", "edit", { filePath: "README.md", oldString: "42", newString: "43" }),
              call("b1", "bash", { command: "touch planned.txt" })
            ],
            [text("Read it; the edit and the command were refused.")]
          ],
          seen
        )
        const plan = yield* Context.get(context, Dispatcher).withProfile("plan")
        const result = yield* plan.dispatch(
          { id: "a4", name: "agent", args: { description: "x", prompt: "Edit things.", subagent_type: "general" } },
          { sessionId: "p", approve: () => Effect.succeed(true) }
        )
        // The planner may start a child (agent is let through plan mode) ...
        expect(result.status).toBe("ok")
        expect(result.modelOutput).toBe("Read it; the edit and the command were refused.")
        // ... which inherits plan mode: it reads, but every change is denied, even when approved.
        const [read, edit, bash] = seen[1]!.results
        expect(read).toMatchObject({ name: "read", isFailure: false, result: expect.stringContaining("42") })
        expect(edit).toMatchObject({ name: "edit", isFailure: true, result: expect.stringContaining("Plan mode") })
        expect(bash).toMatchObject({ name: "bash", isFailure: true, result: expect.stringContaining("Plan mode") })
        expect(NodeFs.readFileSync(NodePath.join(root, "README.md"), "utf8")).toContain("The answer is 42.")
        expect(NodeFs.existsSync(NodePath.join(root, "planned.txt"))).toBe(false)
      })
    )
  )

  it.live("the child's history is held to the budget: its oldest results become markers, and stay them", () =>
    Effect.scoped(
      Effect.gen(function* () {
        for (let i = 1; i <= 5; i++) NodeFs.writeFileSync(NodePath.join(root, `big${i}.txt`), `line ${i}\n`.repeat(400))
        const seen: Array<Turn> = []
        const reads = [1, 2, 3, 4, 5].map((i) => [call(`r${i}`, "read", { filePath: `big${i}.txt` })])
        // After the reads the child follows its oldest marker with an output call, as a model would.
        const context = yield* build(
          [...reads, [call("o1", "output", { id: "r1" })], [text("Read them all.")]],
          seen,
          {},
          { FREECODE_HISTORY_MAX_CHARS: "12000" },
          8
        )
        const result = yield* Context.get(context, Dispatcher).dispatch(
          {
            id: "a5",
            name: "agent",
            args: { description: "read", prompt: "Read the five files.", subagent_type: "explore" }
          },
          { sessionId: "p", approve: () => Effect.succeed(true) }
        )
        expect(result.modelOutput).toContain("Read them all.")
        expect(result.status).toBe("ok")
        // Each read is ~4,800 chars: by the fourth request three results exceed 12,000.
        const last = seen.at(-1)!.history
        expect(last.map((h) => h.id)).toEqual(["r1", "r2", "r3", "r4", "r5", "o1"])
        expect(last[0]!.result).toMatch(
          /^\[read result pruned from the conversation to save context \([\d,]+ chars\)\. Retrieve it with output \{"id": "r1"\}/
        )
        // The newest three are never pruned; what is pruned stays the same marker from then on.
        for (const h of last.slice(-3)) expect(h.result).toContain("line ")
        const prunedAt = seen.findIndex((t) => t.history[0]?.result.startsWith("[read result pruned"))
        expect(prunedAt).toBeGreaterThan(0)
        for (const t of seen.slice(prunedAt)) expect(t.history[0]!.result).toBe(last[0]!.result)
        // The marker's output call brought the result back, under the child's session.
        expect(last.at(-1)!.result).toContain("line 1")
        // The child's session ended with its run: its stored results are gone with it.
        const after = yield* Context.get(context, Dispatcher).dispatch(
          { id: "o2", name: "output", args: { id: "r1" } },
          { sessionId: "p/agent-a5" }
        )
        expect(after.status).toBe("error")
        expect(after.modelOutput).not.toContain("line 1")
      })
    )
  )

  it.live("an unknown subagent_type and a child that never finishes are errors saying what to do", () =>
    Effect.scoped(
      Effect.gen(function* () {
        const loop = Array.from({ length: 6 }, (_, i) => [call(`g${i}`, "glob", { pattern: "*.md" })])
        const context = yield* build(loop, [])
        const dispatcher = Context.get(context, Dispatcher)
        const unknown = yield* dispatcher.dispatch(
          { id: "a5", name: "agent", args: { description: "x", prompt: "y", subagent_type: "wizard" } },
          { sessionId: "p", approve: () => Effect.succeed(true) }
        )
        expect(unknown.status).toBe("error")
        expect(unknown.modelOutput).toContain('unknown subagent_type "wizard"')
        expect(unknown.modelOutput).toContain("Use explore or general")
        const endless = yield* dispatcher.dispatch(
          { id: "a6", name: "agent", args: { description: "x", prompt: "list", subagent_type: "explore" } },
          { sessionId: "p", approve: () => Effect.succeed(true) }
        )
        expect(endless.status).toBe("error")
        expect(endless.modelOutput).toContain("used all 5 turns without finishing")
      })
    )
  )
})

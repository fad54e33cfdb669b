/** Our tools as an effect/ai Toolkit whose handlers go through the Dispatcher. */
import { execFileSync } from "node:child_process"
import * as NodeFs from "node:fs"
import * as NodeOs from "node:os"
import * as NodePath from "node:path"
import { NodeServices } from "@effect/platform-node"
import { afterAll, describe, expect, it } from "@effect/vitest"
import { Context, Effect, Layer, Stream } from "effect"
import { LanguageModel } from "effect/ai"
import { toolSystem } from "../../layers/system.ts"
import { dispatcherToolkit } from "../../src/agent/toolkit.ts"
import { Dispatcher } from "../../src/dispatch/dispatcher.ts"
import { OutputConfig } from "../../src/output/config.ts"
import { OutputStore } from "../../src/output/store.ts"

const root = NodeFs.realpathSync(NodeFs.mkdtempSync(NodePath.join(NodeOs.tmpdir(), "freecode-toolkit-")))
NodeFs.writeFileSync(NodePath.join(root, "notes.txt"), "alpha\nbeta\n")
afterAll(() => NodeFs.rmSync(root, { recursive: true, force: true }))

/** A model that calls the given tools once, then answers. */
const model = (
  calls: ReadonlyArray<{ id: string; name: string; params: unknown }>,
  seen: Array<ReadonlyArray<string>>
) =>
  Layer.effect(
    LanguageModel.LanguageModel,
    LanguageModel.make({
      generateText: (options) =>
        Effect.sync(() => {
          seen.push(options.tools.map((t) => t.name))
          return [
            ...calls.map((c) => ({ type: "tool-call", ...c })),
            { type: "finish", reason: "tool-calls", usage: { inputTokens: { total: 1 }, outputTokens: { total: 1 } } }
          ] as never
        }),
      streamText: () => Stream.empty
    })
  )

describe("dispatcherToolkit", () => {
  it.live("generateText resolves calls through the Dispatcher: results, refusals and the output store", () =>
    Effect.scoped(
      Effect.gen(function* () {
        const context = yield* Layer.build(
          toolSystem({ root, config: {}, outputConfig: OutputConfig.layerWith({}), sessions: "memory" }).pipe(
            Layer.provideMerge(NodeServices.layer)
          )
        )
        const seen: Array<ReadonlyArray<string>> = []
        const { toolkit, handlers } = yield* dispatcherToolkit({ sessionId: "app" }).pipe(
          Effect.provideService(Dispatcher, Context.get(context, Dispatcher))
        )
        const response = yield* LanguageModel.generateText({ prompt: "Read notes.txt, then delete it.", toolkit }).pipe(
          Effect.provide(handlers),
          Effect.provide(
            model(
              [
                { id: "t1", name: "read", params: { filePath: "notes.txt" } },
                { id: "t2", name: "bash", params: { command: "rm notes.txt" } }
              ],
              seen
            )
          )
        )
        expect(seen[0]).toEqual(expect.arrayContaining(["read", "edit", "bash", "todowrite"]))
        const results = response.toolResults.map((r) => [r.name, r.result])
        expect(results[0]).toEqual(["read", expect.stringContaining("alpha")])
        // bash asks for approval; with nobody to approve, the Dispatcher refuses and says why.
        expect(results[1]![0]).toBe("bash")
        expect(String(results[1]![1])).toContain("approval")
        expect(NodeFs.existsSync(NodePath.join(root, "notes.txt"))).toBe(true)
        // The full outputs are in our store, under the app's session and the provider's call ids.
        expect(yield* Context.get(context, OutputStore).ids("app")).toContain("t1")
      })
    )
  )
})

describe("examples/effect-ai.ts (the README's effect/ai example)", () => {
  it("runs as written: the toolkit resolves a read through the Dispatcher, and agent runs a child", () => {
    const project = NodePath.join(root, "example-project")
    NodeFs.mkdirSync(project, { recursive: true })
    NodeFs.writeFileSync(NodePath.join(project, "README.md"), "# Example project\n")
    const out = execFileSync(
      process.execPath,
      [NodePath.resolve(import.meta.dirname, "../../examples/effect-ai.ts"), project],
      { encoding: "utf8", timeout: 60_000 }
    )
    const [read, agent] = out.trim().split("\n")
    expect(read).toMatch(/^read: +1\t# Example project$/)
    expect(agent).toBe("agent: ok: README.md read.")
  }, 90_000)
})

/**
 * Declared, searchable and runnable never disagree: under every mode and profile, a tool is
 * declared or searchable exactly when the engine does not refuse it on every call, and a tool it
 * always refuses is refused when called. (Under plan mode `agent` was once hidden from the model
 * yet dispatchable; one function now decides both.)
 */
import * as NodeFs from "node:fs"
import * as NodeOs from "node:os"
import * as NodePath from "node:path"
import { NodeServices } from "@effect/platform-node"
import { afterAll, describe, expect, it } from "@effect/vitest"
import { Context, Effect, Layer, Stream } from "effect"
import { LanguageModel } from "effect/ai"
import { toolSystem } from "../../layers/system.ts"
import { Dispatcher } from "../../src/dispatch/dispatcher.ts"
import { OutputConfig } from "../../src/output/config.ts"
import type { PermissionMode } from "../../src/permission/config.ts"
import { PermissionEngine } from "../../src/permission/engine.ts"
import { ToolRegistry } from "../../src/registry/registry.ts"
import { type SurfaceOptions, surfaceIn } from "../../src/surface/surface.ts"

const root = NodeFs.realpathSync(NodeFs.mkdtempSync(NodePath.join(NodeOs.tmpdir(), "freecode-agreement-")))
afterAll(() => NodeFs.rmSync(root, { recursive: true, force: true }))

const idle = Layer.effect(
  LanguageModel.LanguageModel,
  LanguageModel.make({ generateText: () => Effect.succeed([] as never), streamText: () => Stream.empty })
)

const MODES: ReadonlyArray<PermissionMode> = ["default", "acceptEdits", "plan", "dontAsk", "bypassPermissions"]
const PROFILES: ReadonlyArray<string | undefined> = [undefined, "read-only", "plan", "pair"]
const SURFACES: ReadonlyArray<SurfaceOptions> = [{ surface: "all" }, { surface: "deferred" }, { surface: "shell" }]

describe("declared, searchable and runnable agree", () => {
  it.live(
    "for every mode, profile and surface",
    () =>
      Effect.gen(function* () {
        for (const mode of MODES) {
          const context = yield* Layer.build(
            toolSystem({
              root,
              outputConfig: OutputConfig.layerWith({}),
              sessions: "memory",
              config: {
                permissions: { defaultMode: mode, deny: ["WebFetch", "Bash(rm *)"] },
                profiles: { pair: { tools: ["read", "edit", "agent", "todowrite"] } }
              },
              agent: { model: idle, maxTurns: 1 }
            }).pipe(Layer.provideMerge(NodeServices.layer))
          )
          const engine = Context.get(context, PermissionEngine)
          const all = yield* Context.get(context, ToolRegistry).tools
          expect(all.map((t) => t.id)).toContain("agent")
          for (const profile of PROFILES) {
            const base = Context.get(context, Dispatcher)
            const dispatcher = profile === undefined ? base : yield* base.withProfile(profile)
            const narrowed = Context.add(context, Dispatcher, dispatcher)
            for (const options of SURFACES) {
              const surface = surfaceIn(narrowed, options)
              const shown = new Set([...(yield* surface.declared()), ...(yield* surface.searchable)].map((t) => t.id))
              const where = `${mode} / ${profile ?? "no profile"} / ${options.surface}`
              for (const tool of all) {
                const refused = engine.alwaysRefused(tool, dispatcher.chain)
                const expected =
                  options.surface === "shell"
                    ? refused === undefined && ["bash", "output"].includes(tool.id)
                    : refused === undefined
                expect(shown.has(tool.id), `${tool.id} under ${where}`).toBe(expected)
                if (refused === undefined) continue
                // Runnable agrees: the rules refuse every call of it.
                const decision = yield* engine.decide(
                  {
                    tool,
                    args: {},
                    ctx: { sessionId: "s", callId: "c", root, canSeeImages: false, emit: () => Effect.void }
                  },
                  dispatcher.chain
                )
                expect(decision.behavior, `${tool.id} under ${where}`).toBe("deny")
              }
            }
          }
        }
      }).pipe(Effect.scoped),
    120_000
  )

  it.live("under plan mode the planner sees agent, and a call of it is not refused by the mode", () =>
    Effect.gen(function* () {
      const context = yield* Layer.build(
        toolSystem({
          root,
          outputConfig: OutputConfig.layerWith({}),
          sessions: "memory",
          config: {},
          agent: { model: idle, maxTurns: 1 }
        }).pipe(Layer.provideMerge(NodeServices.layer))
      )
      const plan = yield* Context.get(context, Dispatcher).withProfile("plan")
      const surface = surfaceIn(Context.add(context, Dispatcher, plan), { surface: "all" })
      const declared = (yield* surface.declared()).map((t) => t.id)
      expect(declared).toContain("agent")
      expect(declared).not.toContain("edit")
      const edit = yield* surface.dispatch(
        { id: "e", name: "edit", args: { filePath: "x", oldString: "a", newString: "b" } },
        { sessionId: "s" }
      )
      expect(edit).toMatchObject({ status: "denied", metadata: { permission: { by: "mode" } } })
    }).pipe(Effect.scoped)
  )
})

import * as NodeFs from "node:fs"
import * as NodeOs from "node:os"
import * as NodePath from "node:path"
import { NodeServices } from "@effect/platform-node"
import { afterAll, describe, expect, it } from "@effect/vitest"
import { Context, Effect, Layer } from "effect"
import { toolSystem } from "../../layers/system.ts"
import { Dispatcher } from "../../src/dispatch/dispatcher.ts"
import { OutputConfig } from "../../src/output/config.ts"
import { projectStateDir } from "../../src/session/location.ts"
import { makeStateDir } from "../session/helpers.ts"

const state = makeStateDir()
const root = NodeFs.realpathSync(NodeFs.mkdtempSync(NodePath.join(NodeOs.tmpdir(), "freecode-memory-")))
const outside = NodeFs.realpathSync(NodeFs.mkdtempSync(NodePath.join(NodeOs.tmpdir(), "freecode-outside-")))
NodeFs.writeFileSync(NodePath.join(outside, "secret.txt"), "do not read me\n")
afterAll(() => {
  state.cleanup()
  NodeFs.rmSync(root, { recursive: true, force: true })
  NodeFs.rmSync(outside, { recursive: true, force: true })
})
const folder = NodePath.join(projectStateDir(state.dir, root), "memories")

const system = toolSystem({
  root,
  config: {},
  outputConfig: OutputConfig.layerWith({}),
  sessions: { stateDir: state.dir }
}).pipe(Layer.provideMerge(NodeServices.layer))

const withMemory = <A, E>(
  f: (
    memory: (args: Record<string, unknown>) => Effect.Effect<{ status: string; modelOutput: string }>
  ) => Effect.Effect<A, E>
) =>
  Effect.scoped(
    Effect.flatMap(Layer.build(system), (context) => {
      const dispatcher = Context.get(context, Dispatcher)
      return f((args) => dispatcher.dispatch({ id: `m-${Math.random()}`, name: "memory", args }, { sessionId: "s" }))
    })
  )

describe("memory", () => {
  it.live("create, view, str_replace, insert, rename and delete under /memories, on real files", () =>
    withMemory((memory) =>
      Effect.gen(function* () {
        const created = yield* memory({
          command: "create",
          path: "/memories/notes/progress.md",
          file_text: "# Progress\nstep one\n"
        })
        expect(created).toMatchObject({ status: "ok", modelOutput: "Created /memories/notes/progress.md." })
        expect(NodeFs.readFileSync(NodePath.join(folder, "notes/progress.md"), "utf8")).toBe("# Progress\nstep one\n")

        const listing = yield* memory({ command: "view", path: "/memories" })
        expect(listing.modelOutput).toBe(
          ["/memories/ (two levels):", "/memories/notes/", "/memories/notes/progress.md\t20 bytes"].join("\n")
        )
        expect((yield* memory({ command: "view", path: "/memories/notes/progress.md" })).modelOutput).toBe(
          "     1\t# Progress\n     2\tstep one"
        )

        expect(
          (yield* memory({
            command: "str_replace",
            path: "/memories/notes/progress.md",
            old_str: "step one",
            new_str: "step one done"
          })).status
        ).toBe("ok")
        expect(
          (yield* memory({
            command: "insert",
            path: "/memories/notes/progress.md",
            insert_line: 1,
            insert_text: "(started today)"
          })).status
        ).toBe("ok")
        expect(NodeFs.readFileSync(NodePath.join(folder, "notes/progress.md"), "utf8")).toBe(
          "# Progress\n(started today)\nstep one done\n"
        )
        expect(
          (yield* memory({ command: "view", path: "/memories/notes/progress.md", view_range: [2, -1] })).modelOutput
        ).toBe("     2\t(started today)\n     3\tstep one done")

        expect(
          (yield* memory({ command: "rename", old_path: "/memories/notes/progress.md", new_path: "/memories/done.md" }))
            .status
        ).toBe("ok")
        expect(NodeFs.existsSync(NodePath.join(folder, "done.md"))).toBe(true)
        expect((yield* memory({ command: "delete", path: "/memories/done.md" })).status).toBe("ok")
        expect(NodeFs.existsSync(NodePath.join(folder, "done.md"))).toBe(false)
      })
    )
  )

  it.live("memories persist: a new tool system for the same project sees them", () =>
    Effect.gen(function* () {
      yield* withMemory((memory) => memory({ command: "create", path: "/memories/lasting.md", file_text: "kept\n" }))
      const seen = yield* withMemory((memory) => memory({ command: "view", path: "/memories/lasting.md" }))
      expect(seen.modelOutput).toBe("     1\tkept")
    })
  )

  it.live("every path is contained: other roots, .., absolute paths and symlinks out are refused", () =>
    withMemory((memory) =>
      Effect.gen(function* () {
        NodeFs.mkdirSync(folder, { recursive: true })
        NodeFs.symlinkSync(outside, NodePath.join(folder, "escape"))
        NodeFs.symlinkSync(NodePath.join(outside, "secret.txt"), NodePath.join(folder, "secret-link.md"))
        const refused = [
          [{ command: "view", path: "/etc/passwd" }, "is outside memory"],
          [{ command: "view", path: "/memories/../../../etc/passwd" }, 'may not contain ".."'],
          [{ command: "create", path: "/memories/a/../../x.md", file_text: "x" }, 'may not contain ".."'],
          [{ command: "create", path: "memories/x.md", file_text: "x" }, "is outside memory"],
          [{ command: "view", path: "/memories/escape/secret.txt" }, "symbolic link"],
          [{ command: "create", path: "/memories/escape/new.md", file_text: "x" }, "symbolic link"],
          [{ command: "view", path: "/memories/secret-link.md" }, "symbolic link"],
          [{ command: "str_replace", path: "/memories/secret-link.md", old_str: "do", new_str: "x" }, "symbolic link"],
          [{ command: "rename", old_path: "/memories/secret-link.md", new_path: "/memories/s.md" }, "symbolic link"],
          [{ command: "delete", path: "/memories" }, "cannot be deleted"]
        ] as const
        for (const [args, message] of refused) {
          const result = yield* memory(args)
          expect(result.status, JSON.stringify(args)).toBe("error")
          expect(result.modelOutput, JSON.stringify(args)).toContain(message)
        }
        // A listing names the links but never looks through them (a recursive readdir would).
        const listing = (yield* memory({ command: "view", path: "/memories" })).modelOutput
        expect(listing).toContain("/memories/escape\t(symbolic link, not followed)")
        expect(listing).toContain("/memories/secret-link.md\t(symbolic link, not followed)")
        expect(listing).not.toContain("secret.txt")
        expect(NodeFs.readFileSync(NodePath.join(outside, "secret.txt"), "utf8")).toBe("do not read me\n")
        expect(NodeFs.readdirSync(outside)).toEqual(["secret.txt"])
        NodeFs.rmSync(NodePath.join(folder, "escape"))
        NodeFs.rmSync(NodePath.join(folder, "secret-link.md"))
      })
    )
  )

  it.live("bad input is an error saying what to do, and leaves files as they were", () =>
    withMemory((memory) =>
      Effect.gen(function* () {
        yield* memory({ command: "create", path: "/memories/twice.md", file_text: "a\na\n" })
        const cases = [
          [{ command: "str_replace", path: "/memories/twice.md", old_str: "a", new_str: "b" }, "occurs 2 times"],
          [{ command: "str_replace", path: "/memories/twice.md", old_str: "zzz", new_str: "b" }, "does not occur"],
          [{ command: "insert", path: "/memories/twice.md", insert_line: 9, insert_text: "x" }, "between 0 and 2"],
          [{ command: "view", path: "/memories/missing.md" }, "does not exist"],
          [{ command: "create", path: "/memories/x.md" }, "needs file_text"],
          [{ command: "rename", old_path: "/memories/twice.md" }, "needs new_path"],
          [{ command: "view", path: "/memories/twice.md", view_range: [3, 1] }, "view_range"]
        ] as const
        for (const [args, message] of cases) {
          const result = yield* memory(args)
          expect(result.status, JSON.stringify(args)).toBe("error")
          expect(result.modelOutput, JSON.stringify(args)).toContain(message)
        }
        expect(NodeFs.readFileSync(NodePath.join(folder, "twice.md"), "utf8")).toBe("a\na\n")
      })
    )
  )
})

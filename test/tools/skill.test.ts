import * as NodeFs from "node:fs"
import * as NodeOs from "node:os"
import * as NodePath from "node:path"
import { NodeServices } from "@effect/platform-node"
import { afterAll, describe, expect, it } from "@effect/vitest"
import { ConfigProvider, Context, Effect, Layer, Logger } from "effect"
import { toolSystem } from "../../layers/system.ts"
import { Dispatcher } from "../../src/dispatch/dispatcher.ts"
import { OutputConfig } from "../../src/output/config.ts"
import { ToolRegistry } from "../../src/registry/registry.ts"
import { defaultSkillDirs, discoverSkills, parseSkillFile, skillDirsConfig } from "../../src/tools/skill.ts"

const root = NodeFs.realpathSync(NodeFs.mkdtempSync(NodePath.join(NodeOs.tmpdir(), "freecode-skill-")))
const user = NodeFs.realpathSync(NodeFs.mkdtempSync(NodePath.join(NodeOs.tmpdir(), "freecode-user-skills-")))
afterAll(() => {
  NodeFs.rmSync(root, { recursive: true, force: true })
  NodeFs.rmSync(user, { recursive: true, force: true })
})
const write = (path: string, text: string) => {
  NodeFs.mkdirSync(NodePath.dirname(path), { recursive: true })
  NodeFs.writeFileSync(path, text)
}
const project = NodePath.join(root, ".freecode", "skills")
const claude = NodePath.join(root, ".claude", "skills")
write(
  NodePath.join(project, "pdf-forms", "SKILL.md"),
  "---\nname: pdf-forms\ndescription: Fill in PDF forms.\n  Use for any .pdf with fields.\n---\n# Filling forms\n\nRun scripts/fill.py.\n"
)
write(NodePath.join(project, "pdf-forms", "scripts", "fill.py"), "print('fill')\n")
write(NodePath.join(project, "pdf-forms", "reference.md"), "# Fields\n")
write(NodePath.join(project, "pdf-forms", ".cache"), "hidden\n")
write(NodePath.join(project, "broken", "SKILL.md"), "---\nname: broken\ndescription: [unclosed\n---\nbody\n")
write(NodePath.join(project, "no-front", "SKILL.md"), "# Just markdown\n")
write(NodePath.join(project, "Bad Name", "SKILL.md"), "---\nname: Bad Name\ndescription: x\n---\n")
write(
  NodePath.join(claude, "release", "SKILL.md"),
  "---\nname: release\ndescription: Cut a release.\n---\nTag, build, publish.\n"
)
write(
  NodePath.join(user, "release", "SKILL.md"),
  "---\nname: release\ndescription: The user's older release notes.\n---\nOld.\n"
)
write(
  NodePath.join(user, "commit", "SKILL.md"),
  "---\nname: commit\ndescription: Write a commit message.\n---\nImperative mood.\n"
)
const dirs = [project, claude, user]

describe("skill discovery", () => {
  it.effect("finds skills in each folder; a bad SKILL.md is skipped with a warning naming it; first name wins", () =>
    Effect.gen(function* () {
      const { skills, warnings } = yield* discoverSkills([...dirs, NodePath.join(root, "missing")])
      expect(skills.map((s) => [s.name, s.description, s.folder])).toEqual([
        ["pdf-forms", "Fill in PDF forms. Use for any .pdf with fields.", NodePath.join(project, "pdf-forms")],
        ["release", "Cut a release.", NodePath.join(claude, "release")],
        ["commit", "Write a commit message.", NodePath.join(user, "commit")]
      ])
      expect(warnings).toHaveLength(4)
      expect(warnings.join("\n")).toContain(
        `${NodePath.join(project, "broken", "SKILL.md")}: its front matter is not valid YAML`
      )
      expect(warnings.join("\n")).toContain(
        `${NodePath.join(project, "no-front", "SKILL.md")}: it does not start with YAML front matter`
      )
      expect(warnings.join("\n")).toContain("needs name: lower-case letters")
      expect(warnings.join("\n")).toContain(`the name release is already used by ${NodePath.join(claude, "release")}`)
    }).pipe(Effect.provide(NodeServices.layer))
  )

  it("parses front matter strictly", () => {
    expect(parseSkillFile("---\nname: a\ndescription: b\n---\nbody")).toEqual({
      name: "a",
      description: "b",
      body: "body"
    })
    expect(parseSkillFile("---\n- a\n---\n")).toContain("needs name")
    expect(parseSkillFile("---\nname: a\n---\n")).toContain("needs description")
  })

  it.effect("FREECODE_SKILL_DIRS replaces the default folders; relative entries resolve against the root", () =>
    Effect.gen(function* () {
      const read = (env: Record<string, string>) =>
        skillDirsConfig(root).pipe(
          Effect.provideService(ConfigProvider.ConfigProvider, ConfigProvider.fromEnv({ env }))
        )
      expect(yield* read({ FREECODE_SKILL_DIRS: "skills:/abs/more" })).toEqual([
        NodePath.join(root, "skills"),
        "/abs/more"
      ])
      expect(yield* read({})).toEqual(defaultSkillDirs(root))
      expect(defaultSkillDirs(root)[2]).toBe(NodePath.join(NodeOs.homedir(), ".claude", "skills"))
    })
  )
})

const system = (skillDirs: ReadonlyArray<string>) =>
  toolSystem({ root, config: {}, outputConfig: OutputConfig.layerWith({}), sessions: "memory", skillDirs }).pipe(
    Layer.provideMerge(NodeServices.layer)
  )

describe("skill tool", () => {
  it.live("its description lists each skill; a call returns the body, the folder and the files beside it", () =>
    Effect.scoped(
      Effect.gen(function* () {
        const context = yield* Layer.build(system(dirs))
        const tool = (yield* Context.get(context, ToolRegistry).tools).find((t) => t.id === "skill")!
        expect(tool.description).toContain("- pdf-forms: Fill in PDF forms. Use for any .pdf with fields.")
        expect(tool.description).toContain("- release: Cut a release.")
        expect(tool.description).toContain("- commit: Write a commit message.")
        expect(tool.description).not.toContain("broken")
        const dispatcher = Context.get(context, Dispatcher)
        const result = yield* dispatcher.dispatch(
          { id: "k1", name: "skill", args: { name: "pdf-forms" } },
          { sessionId: "s" }
        )
        expect(result.status).toBe("ok")
        expect(result.modelOutput).toBe(
          [
            `Skill pdf-forms (folder ${NodePath.join(project, "pdf-forms")}):`,
            "",
            "# Filling forms\n\nRun scripts/fill.py.",
            "",
            "Files in the skill's folder (paths relative to it; read them when the instructions say to):",
            "- reference.md",
            "- scripts/fill.py"
          ].join("\n")
        )
        const unknown = yield* dispatcher.dispatch(
          { id: "k2", name: "skill", args: { name: "pdf-form" } },
          { sessionId: "s" }
        )
        expect(unknown.status).toBe("error")
        expect(unknown.modelOutput).toContain('No skill named "pdf-form". Did you mean pdf-forms?')
        // Read-only: a plan-mode session may load skills.
        const plan = yield* Context.get(context, Dispatcher).withProfile("plan")
        expect(
          (yield* plan.dispatch({ id: "k3", name: "skill", args: { name: "commit" } }, { sessionId: "s" })).status
        ).toBe("ok")
      })
    )
  )

  it.live("the skipped skills are logged as warnings; with no skills at all the tool is not registered", () =>
    Effect.gen(function* () {
      const logged: Array<string> = []
      const logger = Logger.make(({ message }) => logged.push(String(message)))
      yield* Effect.scoped(Layer.build(system([project]))).pipe(Effect.provide(Logger.layer([logger])))
      expect(logged.filter((m) => m.includes("skipped skill"))).toHaveLength(3)
      const tools = yield* Effect.scoped(
        Effect.flatMap(
          Layer.build(system([NodePath.join(root, "nothing-here")])),
          (c) => Context.get(c, ToolRegistry).tools
        )
      )
      expect(tools.map((t) => t.id)).not.toContain("skill")
    })
  )
})

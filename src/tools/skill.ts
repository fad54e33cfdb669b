/**
 * `skill`: skills are folders holding a SKILL.md (YAML front matter `name` and `description`,
 * then instructions) and any files those instructions use. The tool's description lists each
 * skill's name and description; a call returns the instructions, the folder and the files
 * beside them, so the model loads a skill only when a task needs it (progressive disclosure).
 */
import { homedir } from "node:os"
import * as NodePath from "node:path"
import { Config, Effect, FileSystem, Layer, Option, Schema } from "effect"
import { lazyRequire } from "../load/lazy.ts"
import { similarNames } from "../path/similar-names.ts"
import { ToolRegistry } from "../registry/registry.ts"
import { fail } from "../tool/errors.ts"
import { readableError } from "../tool/readable-error.ts"
import { defineTool } from "../tool/tool.ts"

// yaml loads with the first SKILL.md read, not with the package.
const yaml = lazyRequire<typeof import("yaml")>("yaml")

/** Replaces the folders searched for skills: a list separated by `:`. */
export const SKILL_DIRS_NAME = "FREECODE_SKILL_DIRS"
const MAX_FILES_LISTED = 100

export interface Skill {
  readonly name: string
  readonly description: string
  /** The skill's folder (absolute). */
  readonly folder: string
}

export interface Discovered {
  readonly skills: ReadonlyArray<Skill>
  /** One line per skipped SKILL.md, naming the file and what is wrong with it. */
  readonly warnings: ReadonlyArray<string>
}

/** Project skills first, so a project's skill of a name hides the user's. */
export const defaultSkillDirs = (root: string): ReadonlyArray<string> => [
  NodePath.join(root, ".freecode", "skills"),
  NodePath.join(root, ".claude", "skills"),
  NodePath.join(homedir(), ".claude", "skills")
]

/** FREECODE_SKILL_DIRS when set (relative entries against the root), else the defaults. */
export const skillDirsConfig = (root: string): Effect.Effect<ReadonlyArray<string>, Config.ConfigError> =>
  Effect.map(Config.option(Config.String(SKILL_DIRS_NAME)), (set) =>
    Option.isSome(set) && set.value.trim() !== ""
      ? set.value
          .split(":")
          .filter((d) => d !== "")
          .map((d) => NodePath.resolve(root, d))
      : defaultSkillDirs(root)
  )

/** Splits a SKILL.md into its front matter and body; a string is what is wrong with it. */
export const parseSkillFile = (text: string): { name: string; description: string; body: string } | string => {
  const match = /^---\r?\n([\s\S]*?)\r?\n---[ \t]*(?:\r?\n|$)/.exec(text)
  if (match === null) return "it does not start with YAML front matter between --- lines"
  let data: unknown
  try {
    data = yaml().parse(match[1]!)
  } catch (e) {
    return `its front matter is not valid YAML (${(e as Error).message.split("\n")[0]})`
  }
  if (typeof data !== "object" || data === null) return "its front matter is not a mapping of keys to values"
  const { name, description } = data as { name?: unknown; description?: unknown }
  if (typeof name !== "string" || !/^[a-z0-9][a-z0-9-]{0,63}$/.test(name)) {
    return "its front matter needs name: lower-case letters, digits and hyphens, at most 64 characters"
  }
  if (typeof description !== "string" || description.trim() === "" || description.length > 1024) {
    return "its front matter needs description: a non-empty string of at most 1,024 characters"
  }
  return { name, description: description.trim().replace(/\s+/g, " "), body: text.slice(match[0].length).trim() }
}

/** Finds `<dir>/<skill>/SKILL.md` in each folder; a bad one is skipped with a warning, never the rest. */
export const discoverSkills = Effect.fnUntraced(function* (
  dirs: ReadonlyArray<string>
): Effect.fn.Return<Discovered, never, FileSystem.FileSystem> {
  const fs = yield* FileSystem.FileSystem
  const skills: Array<Skill> = []
  const warnings: Array<string> = []
  for (const dir of dirs) {
    const entries = yield* fs.readDirectory(dir).pipe(Effect.orElseSucceed(() => [] as Array<string>))
    for (const entry of [...entries].sort()) {
      const folder = NodePath.join(dir, entry)
      const file = NodePath.join(folder, "SKILL.md")
      const text = yield* fs.readFileString(file).pipe(Effect.option)
      if (Option.isNone(text)) continue
      const parsed = parseSkillFile(text.value)
      if (typeof parsed === "string") {
        warnings.push(`skipped skill ${file}: ${parsed}`)
        continue
      }
      const taken = skills.find((s) => s.name === parsed.name)
      if (taken !== undefined) {
        warnings.push(`skipped skill ${file}: the name ${parsed.name} is already used by ${taken.folder}`)
        continue
      }
      skills.push({ name: parsed.name, description: parsed.description, folder })
    }
  }
  return { skills, warnings }
})

/** The files beside SKILL.md, relative to the folder, hidden ones left out. */
const filesBeside = (fs: FileSystem.FileSystem, folder: string) =>
  fs.readDirectory(folder, { recursive: true }).pipe(
    Effect.orElseSucceed(() => [] as Array<string>),
    Effect.flatMap((entries) =>
      Effect.filter(
        entries.filter((e) => e !== "SKILL.md" && !e.split("/").some((s) => s.startsWith("."))).sort(),
        (e) =>
          Effect.map(
            fs.stat(NodePath.join(folder, e)).pipe(Effect.option),
            (s) => Option.isSome(s) && s.value.type === "File"
          )
      )
    )
  )

/** The skill tool for these skills; its description lists them. */
export const makeSkillTool = (skills: ReadonlyArray<Skill>) =>
  defineTool({
    id: "skill",
    description: [
      "Load a skill: instructions for a kind of task, and the files they use. Load one when the task matches its description, before starting.",
      ...skills.map((s) => `- ${s.name}: ${s.description}`)
    ].join("\n"),
    parameters: Schema.Struct({ name: Schema.String.annotate({ description: "The skill's name, from the list." }) }),
    concurrencySafe: true,
    retrySafe: true,
    interruptBehavior: "cancel",
    truncate: "head",
    permissions: { operations: ["session.read"] },
    execute: ({ name }) =>
      Effect.gen(function* () {
        const skill = skills.find((s) => s.name === name)
        if (skill === undefined) {
          const near = similarNames(
            name,
            skills.map((s) => s.name)
          )
          return yield* fail(
            `No skill named ${JSON.stringify(name)}.${near.length > 0 ? ` Did you mean ${near.join(", ")}?` : ""} Skills: ${skills.map((s) => s.name).join(", ")}.`
          )
        }
        const fs = yield* FileSystem.FileSystem
        const file = NodePath.join(skill.folder, "SKILL.md")
        const text = yield* fs
          .readFileString(file)
          .pipe(Effect.mapError((e) => fail(`The skill's file ${file} cannot be read now (${readableError(e)}).`)))
        const parsed = parseSkillFile(text)
        if (typeof parsed === "string")
          return yield* fail(`The skill's file ${file} changed and is now invalid: ${parsed}.`)
        const files = yield* filesBeside(fs, skill.folder)
        const listed = files.slice(0, MAX_FILES_LISTED).map((f) => `- ${f}`)
        if (files.length > MAX_FILES_LISTED) listed.push(`- … and ${files.length - MAX_FILES_LISTED} more`)
        const output = [
          `Skill ${skill.name} (folder ${skill.folder}):`,
          "",
          parsed.body,
          ...(files.length === 0
            ? []
            : [
                "",
                "Files in the skill's folder (paths relative to it; read them when the instructions say to):",
                ...listed
              ])
        ].join("\n")
        return { title: `skill ${skill.name}`, output, metadata: { folder: skill.folder, files } }
      })
  })

/**
 * Registers `skill` when at least one skill is found (a tool listing no skills would only cost
 * tokens). Each skipped SKILL.md is logged as a warning.
 */
export const skillLayer = (options: { readonly root: string; readonly dirs?: ReadonlyArray<string> }) =>
  Layer.effectDiscard(
    Effect.gen(function* () {
      const dirs = options.dirs ?? (yield* skillDirsConfig(options.root))
      const { skills, warnings } = yield* discoverSkills(dirs)
      for (const warning of warnings) yield* Effect.logWarning(warning)
      if (skills.length === 0) return
      const registry = yield* ToolRegistry
      yield* registry.register(makeSkillTool(skills))
    }).pipe(Effect.orDie)
  )

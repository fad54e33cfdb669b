/**
 * Reading the configuration: the person's own freecode.json (user level), then the project's
 * `.mcp.json` and `freecode.json` at the root (or the file given with `--config`), each validated
 * against the sections the composition names, merged lowest first; and the `FreecodeConfig`
 * service that holds the result. An untrusted folder's own files start no program.
 */
import { Context, Effect, Layer, Path, Result, Schema } from "effect"
import { LocalFs } from "../fs/local-fs.ts"
import { ConfigError } from "./error.ts"
import { describeIssues, knownKeysIn } from "./issues.ts"
import { readJsonFile } from "./read-file.ts"
import type { ConfigSection, KnownTool } from "./section.ts"
import { isTrusted } from "./trust.ts"
import { userConfigFile } from "./user.ts"

export { ConfigError }

// biome-ignore lint/suspicious/noExplicitAny: a list of sections of different value types
export type Sections = ReadonlyArray<ConfigSection<any>>

/** What one file gave, by section key (after trust: an untrusted folder's programs are gone). */
export interface ConfigFileValues {
  readonly file: string
  readonly values: Readonly<Record<string, unknown>>
}

export interface FreecodeConfigShape {
  /** The project's freecode.json (or the `--config` file) that was read, if any. */
  readonly file: string | undefined
  /** Each section's value, the files merged (see docs/configuration.md for the rules). */
  readonly values: Readonly<Record<string, unknown>>
  /** The files read, lowest first, with what each gave: checks name the file a problem is in. */
  readonly sources: ReadonlyArray<ConfigFileValues>
  /** What an untrusted folder's files would have started and did not, one phrase each. */
  readonly skipped: ReadonlyArray<string>
  /** Whether the project folder's own programs may start (read from its files); absent for a configuration given in code. */
  readonly trusted?: boolean
}

/** A section's value in the configuration (validated against its schema when it was loaded). */
export const sectionOf = <A>(config: FreecodeConfigShape | undefined, section: ConfigSection<A>): A | undefined =>
  config?.values[section.key] as A | undefined

/** A configuration given in code: the embedder's own, so nothing of it is held back. */
export const configGiven = (
  data: Readonly<Record<string, unknown>> & { readonly file?: string }
): FreecodeConfigShape => {
  const { file, ...values } = data
  return { file, values, sources: [{ file: file ?? "the configuration given in code", values }], skipped: [] }
}

/** The project's configuration, read once when the tool system is built. */
export class FreecodeConfig extends Context.Service<FreecodeConfig, FreecodeConfigShape>()("freecode/Config") {
  /** A configuration given in code (an embedder's, or a test's). */
  static readonly layerWith = (config: Readonly<Record<string, unknown>> & { readonly file?: string }) =>
    Layer.succeed(FreecodeConfig, FreecodeConfig.of(configGiven(config)))

  /** The files read as `loadConfigFiles` reads them. */
  static readonly layerFrom = (root: string, options: LoadOptions) =>
    Layer.effect(FreecodeConfig, loadConfigFiles(root, options))

  /**
   * What `ConfigSource` says: the configuration already loaded (not read again), else the
   * files read as `layerFrom` does, with the source's `file` and `trusted`.
   */
  static readonly layerFromSource = (root: string, sections: Sections) =>
    Layer.effect(
      FreecodeConfig,
      Effect.gen(function* () {
        const source = yield* ConfigSource
        if (source.loaded !== undefined) return source.loaded
        return yield* loadConfigFiles(root, {
          sections,
          ...(source.file === undefined ? {} : { file: source.file }),
          ...(source.trusted === undefined ? {} : { trusted: source.trusted })
        })
      })
    )
}

/**
 * Where the configuration of the layer built under it comes from. A reference so the CLI's
 * tool-system factory (which only knows the root) picks it up without a new parameter.
 */
export interface ConfigSourceShape {
  /** The file `--config` names; default: freecode.json at the root, when there is one. */
  readonly file?: string
  /** `--trust`: the folder's own programs may start this run. Default: as `freecode-tools trust` recorded. */
  readonly trusted?: boolean
  /**
   * The configuration `loadConfigFiles` already returned for this root (the CLI validates it
   * before building anything, to report misuse early): used as it is, so files are parsed once.
   */
  readonly loaded?: FreecodeConfigShape
}

export const ConfigSource = Context.Reference<ConfigSourceShape>("freecode/ConfigSource", {
  defaultValue: () => ({})
})

const isRecord = (v: unknown): v is Record<string, unknown> => typeof v === "object" && v !== null && !Array.isArray(v)

const decoders = new WeakMap<ConfigSection<unknown>, ReturnType<typeof Schema.decodeUnknownResult>>()
const decoderOf = (section: ConfigSection<unknown>) => {
  let decode = decoders.get(section)
  if (decode === undefined) {
    decode = Schema.decodeUnknownResult(section.schema)
    decoders.set(section, decode)
  }
  return decode
}

/**
 * Validates one file's object against the sections it may hold (`$schema` is always allowed
 * and ignored); `source` names the file in the message, which lists every problem.
 */
export const parseConfigWith = (
  value: unknown,
  source: string,
  sections: Sections
): Result.Result<Record<string, unknown>, ConfigError> => {
  if (!isRecord(value)) return Result.fail(new ConfigError({ message: `${source} must hold a JSON object.` }))
  const table = Object.assign({ "": ["$schema", ...sections.map((s) => s.key)] }, ...sections.map((s) => s.knownKeys))
  const knownKeysAt = knownKeysIn(table)
  const lines: Array<string> = []
  const values: Record<string, unknown> = {}
  const byKey = new Map(sections.map((s) => [s.key, s]))
  for (const [key, raw] of Object.entries(value)) {
    if (key === "$schema") {
      if (typeof raw !== "string") lines.push(`$schema: Expected string, got ${JSON.stringify(raw)}`)
      continue
    }
    const section = byKey.get(key)
    if (section === undefined) {
      lines.push(`${key}: unknown key; expected one of ${(table[""] as ReadonlyArray<string>).join(", ")}`)
      continue
    }
    const decoded = decoderOf(section)(raw, { errors: "all", onExcessProperty: "error" })
    if (Result.isSuccess(decoded)) values[key] = decoded.success
    else lines.push(...describeIssues(decoded.failure.issue, value, knownKeysAt, [key]))
  }
  if (lines.length > 0) {
    return Result.fail(
      new ConfigError({ message: `${source} is not valid:\n${lines.map((l) => `- ${l}`).join("\n")}` })
    )
  }
  return Result.succeed(values)
}

export interface LoadOptions {
  /** Every section freecode.json may hold (the composition's list). */
  readonly sections: Sections
  /** `--config`: read instead of the project's freecode.json; it must exist. The person's own, so trusted. */
  readonly file?: string
  /** Whether the folder's own files may start programs; default: as `freecode-tools trust` recorded. */
  readonly trusted?: boolean
  /** The person's own config file; default `userConfigFile` (XDG). `false`: none. */
  readonly userFile?: string | false
}

interface Layered {
  readonly file: string
  readonly values: Record<string, unknown>
  readonly own: boolean
}

/** Whether two names are one file, links followed (a name that does not resolve is itself). */
const sameFile = (a: string, b: string): Effect.Effect<boolean, never, LocalFs> =>
  Effect.flatMap(Effect.service(LocalFs), (fs) => {
    const real = (file: string) => fs.realPath(file).pipe(Effect.orElseSucceed(() => file))
    return Effect.zipWith(real(a), real(b), (x, y) => x === y)
  })

const mergeAll = (layers: ReadonlyArray<ConfigFileValues>, sections: Sections): Record<string, unknown> => {
  const merged: Record<string, unknown> = {}
  for (const section of sections) {
    for (const layer of layers) {
      const value = layer.values[section.key]
      if (value === undefined) continue
      const lower = merged[section.key]
      merged[section.key] = lower === undefined || section.merge === undefined ? value : section.merge(lower, value)
    }
  }
  return merged
}

/**
 * Reads the configuration of a session at `root`, lowest first: the person's own file, then the
 * project's companion files (`.mcp.json`), then `file` (when given; it must exist) or the
 * project's freecode.json. Project files of an untrusted folder keep everything but what starts
 * a program; what was left out is in `skipped`.
 */
export const loadConfigFiles = Effect.fnUntraced(function* (
  root: string,
  options: LoadOptions
): Effect.fn.Return<FreecodeConfigShape, ConfigError, Path.Path | LocalFs> {
  const path = yield* Path.Path
  const { sections } = options
  const trusted = options.trusted ?? (yield* isTrusted(root))
  const read = Effect.fnUntraced(function* (file: string, required: boolean, allowed: Sections, own: boolean) {
    const json = yield* readJsonFile(file, required)
    if (json === undefined) return undefined
    const values = yield* Effect.fromResult(parseConfigWith(json, file, allowed))
    return { file, values, own } satisfies Layered
  })

  const layers: Array<Layered> = []
  const mainFile = options.file === undefined ? path.join(root, "freecode.json") : path.resolve(root, options.file)
  const userFile = options.userFile ?? (yield* userConfigFile)
  // Your own file given as the project's (`--config` it, or work in its folder) is read once,
  // so its hooks do not run twice and its rules are not listed twice.
  if (userFile !== false && !(yield* sameFile(userFile, mainFile))) {
    const user = yield* read(userFile, false, sections, true)
    if (user !== undefined) layers.push(user)
  }
  const companions = [...new Set(sections.flatMap((s) => (s.alsoIn === undefined ? [] : [s.alsoIn])))]
  for (const name of companions) {
    const layer = yield* read(
      path.join(root, name),
      false,
      sections.filter((s) => s.alsoIn === name),
      false
    )
    if (layer !== undefined) layers.push(layer)
  }
  const main = yield* read(mainFile, options.file !== undefined, sections, options.file !== undefined)
  if (main !== undefined) layers.push(main)

  const skipped: Array<string> = []
  const sources = layers.map(({ file, values, own }): ConfigFileValues => {
    if (own || trusted) return { file, values }
    const kept: Record<string, unknown> = {}
    for (const section of sections) {
      const value = values[section.key]
      if (value === undefined) continue
      if (section.withoutPrograms === undefined) {
        kept[section.key] = value
        continue
      }
      const split = section.withoutPrograms(value)
      if (split.kept !== undefined) kept[section.key] = split.kept
      for (const s of split.skipped) skipped.push(`${s} (${path.basename(file)})`)
    }
    return { file, values: kept }
  })
  return { file: main?.file, values: mergeAll(sources, sections), sources, skipped, trusted }
})

/**
 * Checks that need the tools there are (a rule naming a tool that does not exist); every
 * problem at once, each naming its file and key.
 */
export const checkAgainstTools = (
  config: FreecodeConfigShape,
  sections: Sections,
  tools: ReadonlyArray<KnownTool>
): ConfigError | undefined => {
  const messages: Array<string> = []
  for (const source of config.sources) {
    const lines = sections.flatMap((section) => {
      const value = source.values[section.key]
      return value === undefined || section.checkTools === undefined ? [] : section.checkTools(value, tools)
    })
    if (lines.length > 0) messages.push(`${source.file} is not valid:\n${lines.map((l) => `- ${l}`).join("\n")}`)
  }
  return messages.length === 0 ? undefined : new ConfigError({ message: messages.join("\n") })
}

/** The one line the CLI prints when an untrusted folder's programs were left out; undefined when none were. */
export const untrustedNote = (root: string, config: FreecodeConfigShape): string | undefined =>
  config.skipped.length === 0
    ? undefined
    : `${root} is not trusted, so its own ${config.skipped.join(", ")} did not start; to trust it, run 'freecode-tools trust ${root}' (or pass --trust for one run).`

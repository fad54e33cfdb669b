/**
 * Reading `freecode.json` (at the project root, or the file given with `--config`) and
 * `.mcp.json` beside it, and the `FreecodeConfig` service that holds the result.
 */
import { Context, Data, Effect, FileSystem, Layer, Path, Result, Schema, SchemaIssue } from "effect"
import { McpServers } from "../mcp/config.ts"
import { isRecord } from "../schema/json-schema.ts"
import { type FreecodeConfigData, FreecodeConfigSchema, KNOWN_KEYS } from "./schema.ts"

/** A config file that cannot be used; `message` names the file, the key and what was expected. */
export class ConfigError extends Data.TaggedError("ConfigError")<{ readonly message: string }> {}

export interface FreecodeConfigShape extends FreecodeConfigData {
  /** The freecode.json that was read, if any. */
  readonly file: string | undefined
}

export const emptyConfig: FreecodeConfigShape = { file: undefined }

/** The project's configuration, read once when the tool system is built. */
export class FreecodeConfig extends Context.Service<FreecodeConfig, FreecodeConfigShape>()("freecode/Config") {
  /** A configuration given in code (an embedder's, or a test's). */
  static readonly layerWith = (config: FreecodeConfigData & { readonly file?: string }) =>
    Layer.succeed(FreecodeConfig, FreecodeConfig.of({ ...config, file: config.file }))

  /** `freecode.json` (or `file`) and `.mcp.json` at the root, validated. */
  static readonly layerFrom = (root: string, file?: string) => Layer.effect(FreecodeConfig, loadConfig(root, file))

  /**
   * What `ConfigSource` says: the configuration already loaded (not read again), else the
   * files read as `layerFrom` does, `file` when given.
   */
  static readonly layerFromSource = (root: string) =>
    Layer.effect(
      FreecodeConfig,
      Effect.gen(function* () {
        const source = yield* ConfigSource
        return source.loaded ?? (yield* loadConfig(root, source.file))
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
  /**
   * The configuration `loadConfig` already returned for this root (the CLI validates it before
   * building anything, to report misuse early): used as it is, so the files are parsed once.
   */
  readonly loaded?: FreecodeConfigShape
}

export const ConfigSource = Context.Reference<ConfigSourceShape>("freecode/ConfigSource", {
  defaultValue: () => ({})
})

const formatIssues = SchemaIssue.makeFormatterStandardSchemaV1()

const renderPath = (path: ReadonlyArray<PropertyKey>) =>
  path.map((k, i) => (typeof k === "number" ? `[${k}]` : i === 0 ? String(k) : `.${String(k)}`)).join("")

const knownKeysAt = (parent: ReadonlyArray<PropertyKey>): ReadonlyArray<string> | undefined => {
  const generic = parent.map((k, i) => (typeof k === "number" ? "[]" : i === 0 ? String(k) : `.${String(k)}`)).join("")
  const profile = parent[0] === "profiles" && parent.length === 2 ? "profiles.*" : undefined
  return KNOWN_KEYS[profile ?? generic]
}

/** Every problem in the file, one line each: `key.path: what was expected, what came`. */
export const describeIssues = (issue: SchemaIssue.Issue, input: unknown): Array<string> =>
  formatIssues(issue).issues.map((i) => {
    const path = (i.path ?? []).map((p) =>
      typeof p === "object" && p !== null && "key" in p ? (p as { key: PropertyKey }).key : p
    ) as Array<PropertyKey>
    const where = path.length === 0 ? "(top level)" : renderPath(path)
    if (/excess|unexpected/i.test(i.message)) {
      const known = knownKeysAt(path.slice(0, -1))
      return `${where}: unknown key${known === undefined ? "" : `; expected one of ${known.join(", ")}`}`
    }
    let got: unknown = input
    for (const k of path)
      got = isRecord(got) || Array.isArray(got) ? (got as Record<PropertyKey, unknown>)[k] : undefined
    const shown = got === undefined ? "nothing" : JSON.stringify(got)
    if (i.message === "Missing key") return `${where}: missing`
    // A rule's own message already quotes the value.
    return i.message.includes(shown) ? `${where}: ${i.message}` : `${where}: ${i.message}, got ${shown}`
  })

const decode = Schema.decodeUnknownResult(FreecodeConfigSchema)

/** Validates a parsed config object; `source` names the file in the message. */
export const parseConfig = (value: unknown, source: string): Result.Result<FreecodeConfigData, ConfigError> => {
  if (!isRecord(value)) return Result.fail(new ConfigError({ message: `${source} must hold a JSON object.` }))
  const decoded = decode(value, { errors: "all", onExcessProperty: "error" })
  if (Result.isSuccess(decoded)) return Result.succeed(decoded.success)
  const lines = describeIssues(decoded.failure.issue, value)
  return Result.fail(new ConfigError({ message: `${source} is not valid:\n${lines.map((l) => `- ${l}`).join("\n")}` }))
}

const readJson = (file: string): Effect.Effect<unknown, ConfigError, FileSystem.FileSystem> =>
  Effect.gen(function* () {
    const fs = yield* FileSystem.FileSystem
    const text = yield* fs
      .readFileString(file)
      .pipe(Effect.mapError((e) => new ConfigError({ message: `${file} cannot be read: ${e.message}` })))
    try {
      return JSON.parse(text) as unknown
    } catch (e) {
      return yield* new ConfigError({ message: `${file} is not valid JSON: ${(e as Error).message}` })
    }
  })

const decodeServers = Schema.decodeUnknownResult(McpServers)

/**
 * Reads the config: `file` when given (it must exist), else `<root>/freecode.json` when there is
 * one. `.mcp.json` at the root adds MCP servers; freecode.json wins for a name both define.
 */
export const loadConfig = (
  root: string,
  file?: string
): Effect.Effect<FreecodeConfigShape, ConfigError, FileSystem.FileSystem | Path.Path> =>
  Effect.gen(function* () {
    const fs = yield* FileSystem.FileSystem
    const path = yield* Path.Path
    const exists = (p: string) => fs.exists(p).pipe(Effect.orElseSucceed(() => false))
    const configFile = file === undefined ? path.join(root, "freecode.json") : path.resolve(root, file)
    const useConfig = file !== undefined || (yield* exists(configFile))
    const data: FreecodeConfigData = useConfig
      ? yield* Effect.fromResult(parseConfig(yield* readJson(configFile), configFile))
      : {}
    const mcpFile = path.join(root, ".mcp.json")
    if (!(yield* exists(mcpFile))) return { ...data, file: useConfig ? configFile : undefined }
    const mcp = yield* readJson(mcpFile)
    const servers = isRecord(mcp) ? mcp.mcpServers : undefined
    if (servers === undefined) return { ...data, file: useConfig ? configFile : undefined }
    const decoded = decodeServers(servers, { errors: "all" })
    if (Result.isFailure(decoded)) {
      const lines = describeIssues(decoded.failure.issue, servers)
      return yield* new ConfigError({
        message: `${mcpFile} is not valid:\n${lines.map((l) => `- mcpServers.${l}`).join("\n")}`
      })
    }
    return {
      ...data,
      mcpServers: { ...decoded.success, ...data.mcpServers },
      file: useConfig ? configFile : undefined
    }
  })

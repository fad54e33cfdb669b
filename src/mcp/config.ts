/**
 * The `mcpServers` setting: the shape `.mcp.json` already has (stdio `{command, args, env}`,
 * streamable HTTP `{url, headers}`), plus our own per-server keys. Read from `.mcp.json` at the
 * project root and from `freecode.json` (which wins for a name both define).
 */
import { Data, Effect, Path, Schema } from "effect"
import { readJsonFile } from "../config/read-file.ts"
import { defineSection } from "../config/section.ts"
import type { LocalFs } from "../fs/local-fs.ts"
import { isRecord } from "../schema/json-schema.ts"

const common = {
  /** false: the server's annotations (readOnlyHint, …) count for nothing; every tool is treated as mutating. */
  trusted: Schema.optionalKey(
    Schema.Boolean.annotate({ description: "Whether the server's tool annotations are believed (default true)." })
  ),
  /** Per-call timeout in milliseconds; progress notifications reset it. Default 60 000. */
  timeout: Schema.optionalKey(
    Schema.Finite.check(Schema.isGreaterThan(0)).annotate({ description: "Per-call timeout in ms (default 60000)." })
  ),
  /** How long connecting and listing may take, in milliseconds. Default 30 000. */
  startupTimeout: Schema.optionalKey(
    Schema.Finite.check(Schema.isGreaterThan(0)).annotate({ description: "Connect timeout in ms (default 30000)." })
  ),
  /** Absent: the era the server speaks, found with `server/discover`. A revision pins it. */
  protocol: Schema.optionalKey(
    Schema.Literals(["2026-07-28", "2025-11-25"]).annotate({
      description: "Pin the protocol revision (default: ask the server with server/discover)."
    })
  )
}

export const StdioServerConfig = Schema.Struct({
  type: Schema.optionalKey(Schema.Literal("stdio")),
  command: Schema.String.annotate({ description: "The program to start." }),
  args: Schema.optionalKey(Schema.Array(Schema.String)),
  /** Added to a minimal inherited environment (HOME, PATH, USER, SHELL, TERM, LOGNAME). */
  env: Schema.optionalKey(Schema.Record(Schema.String, Schema.String)),
  cwd: Schema.optionalKey(Schema.String),
  ...common
})
export type StdioServerConfig = typeof StdioServerConfig.Type

/** How we log in to a server that asks for OAuth (`freecode-tools mcp-auth login NAME`; docs/mcp.md). */
export const OAuthClientConfig = Schema.Struct({
  clientId: Schema.optionalKey(Schema.String.annotate({ description: "A client id registered by hand." })),
  /** The hand-registered client's secret is never written in the config: it is read from here. */
  clientSecretEnv: Schema.optionalKey(
    Schema.String.annotate({ description: "The environment variable holding clientId's secret." })
  ),
  clientSecretFile: Schema.optionalKey(
    Schema.String.annotate({ description: "A file holding clientId's secret (relative to the project root)." })
  ),
  clientMetadataUrl: Schema.optionalKey(
    Schema.String.annotate({ description: "The https URL of our Client ID Metadata Document." })
  ),
  scope: Schema.optionalKey(Schema.String.annotate({ description: "Scopes to ask for, when the server names none." }))
})

export const HttpServerConfig = Schema.Struct({
  type: Schema.optionalKey(Schema.Literals(["http", "streamable-http"])),
  url: Schema.String.annotate({ description: "The server's streamable HTTP endpoint." }),
  headers: Schema.optionalKey(Schema.Record(Schema.String, Schema.String)),
  oauth: Schema.optionalKey(OAuthClientConfig),
  ...common
})
export type HttpServerConfig = typeof HttpServerConfig.Type

export const McpServerConfig = Schema.Union([StdioServerConfig, HttpServerConfig])
export type McpServerConfig = typeof McpServerConfig.Type

/** The value of the `mcpServers` key, in `freecode.json` and `.mcp.json` alike. */
export const McpServers = Schema.Record(Schema.String, McpServerConfig)
export type McpServers = typeof McpServers.Type

export const isStdio = (config: McpServerConfig): config is StdioServerConfig => "command" in config

export const DEFAULT_CALL_TIMEOUT_MS = 60_000
export const DEFAULT_STARTUP_TIMEOUT_MS = 30_000

export class McpConfigError extends Data.TaggedError("McpConfigError")<{ readonly message: string }> {}

const decodeServers = Schema.decodeUnknownResult(McpServers)

/** Decodes one file's `mcpServers` value; `source` names the file in the message. */
export const parseMcpServers = (value: unknown, source: string): Effect.Effect<McpServers, McpConfigError> => {
  const decoded = decodeServers(value, { errors: "all", onExcessProperty: "error" })
  return decoded._tag === "Success"
    ? Effect.succeed(decoded.success)
    : Effect.fail(
        new McpConfigError({
          message: `mcpServers in ${source} is not valid (each server needs "command" or "url"):\n${decoded.failure.message}`
        })
      )
}

/**
 * The servers a session at `root` connects to: `.mcp.json` at the root, then `freecode.json`
 * (`configFile`, else the one at the root, if any); a name in both takes freecode.json's entry.
 * Read as every config file is (src/config/read-file.ts): a dangling link, a FIFO or a
 * duplicate key is an error, not a silently empty list.
 */
export const loadMcpServers = Effect.fnUntraced(function* (
  root: string,
  configFile?: string
): Effect.fn.Return<McpServers, McpConfigError, Path.Path | LocalFs> {
  const path = yield* Path.Path
  const servers: Record<string, McpServerConfig> = {}
  const sources: ReadonlyArray<readonly [string, boolean]> = [
    [path.join(root, ".mcp.json"), false],
    configFile === undefined ? [path.join(root, "freecode.json"), false] : [path.resolve(root, configFile), true]
  ]
  for (const [file, required] of sources) {
    const json = yield* readJsonFile(file, required).pipe(
      Effect.mapError((e) => new McpConfigError({ message: e.message }))
    )
    if (json === undefined) continue
    if (!isRecord(json)) return yield* new McpConfigError({ message: `${file} must hold a JSON object.` })
    if (json.mcpServers === undefined) continue
    Object.assign(servers, yield* parseMcpServers(json.mcpServers, file))
  }
  return servers
})

const serverNames = (servers: McpServers) => Object.keys(servers).join(", ")

/**
 * The `mcpServers` section: in freecode.json, and in `.mcp.json` at the root (which holds only
 * it, as Claude Code's does). freecode.json's entry wins for a name both define.
 */
export const mcpServersSection = defineSection<McpServers, "mcpServers">({
  key: "mcpServers",
  schema: McpServers,
  alsoIn: ".mcp.json",
  knownKeys: {
    "mcpServers.*": [...new Set([...Object.keys(StdioServerConfig.fields), ...Object.keys(HttpServerConfig.fields)])]
  },
  merge: (lower, upper) => ({ ...lower, ...upper }),
  withoutPrograms: (value) => {
    const names = Object.keys(value)
    return {
      kept: undefined,
      skipped: names.length === 0 ? [] : [`MCP server${names.length === 1 ? "" : "s"} ${serverNames(value)}`]
    }
  }
})

/** `${VAR}` and `${VAR:-default}` in a config string, as Claude Code's .mcp.json allows. */
export const expandEnv = (text: string, env: Readonly<Record<string, string | undefined>>): string =>
  text.replace(/\$\{([A-Za-z_][A-Za-z0-9_]*)(?::-([^}]*))?\}/g, (_, name: string, fallback: string | undefined) => {
    const value = env[name]
    return value !== undefined && value !== "" ? value : (fallback ?? "")
  })

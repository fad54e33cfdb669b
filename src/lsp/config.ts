/**
 * The `lsp` section of freecode.json: language servers beyond the built-in table, built-in ones
 * replaced, or turned off. Like the built-ins, a configured server is used only when its binary
 * exists; nothing is downloaded.
 *
 *   "lsp": { "servers": {
 *     "lua": { "command": ["lua-language-server"], "extensions": ["lua"], "rootMarkers": [".luarc.json"] },
 *     "pyright": false
 *   } }
 */
import * as NodePath from "node:path"
import { Effect, Schema } from "effect"
import { defineSection } from "../config/section.ts"
import { exists, isProjectProgram, onPath, untrustedProgram } from "./place.ts"
import { SERVERS, type ServerSpec } from "./servers.ts"

export const LspServerConfig = Schema.Struct({
  /** The program and its arguments; a bare name is looked up on PATH, a path is relative to the root. */
  command: Schema.Array(Schema.String).check(Schema.isMinLength(1)),
  /** File extensions it handles, without the dot. */
  extensions: Schema.Array(Schema.String).check(Schema.isMinLength(1)),
  /** The LSP languageId sent with its files; default: the file's extension. */
  languageId: Schema.optionalKey(Schema.String),
  /** Files marking its workspace root (nearest ancestor wins); default: the project root. */
  rootMarkers: Schema.optionalKey(Schema.Array(Schema.String))
})
export type LspServerConfig = typeof LspServerConfig.Type

export const LspConfig = Schema.Struct({
  /** By id: a server to add or to replace the built-in of that id, or `false` to turn a built-in off. */
  servers: Schema.optionalKey(Schema.Record(Schema.String, Schema.Union([LspServerConfig, Schema.Literal(false)])))
})
export type LspConfig = typeof LspConfig.Type

/** How a configured server starts: a path (relative to the root) as named, a bare name from PATH. */
const resolveConfigured =
  (program: string, args: ReadonlyArray<string>): ServerSpec["resolve"] =>
  (root, place) =>
    Effect.gen(function* () {
      if (program.includes("/")) {
        const command = NodePath.resolve(root, program)
        if (!(yield* exists(command))) return { missing: `${command} does not exist` }
        return !place.trusted && (yield* isProjectProgram(place, command))
          ? untrustedProgram(place, command)
          : { command, args }
      }
      const command = yield* onPath(program, place)
      return command === undefined ? { missing: `${program} is not on PATH` } : { command, args }
    })

const specFrom = (id: string, c: LspServerConfig): ServerSpec => {
  const [program = "", ...args] = c.command
  const extensions = Object.fromEntries(
    c.extensions.map((e) => {
      const ext = e.replace(/^\./, "").toLowerCase()
      return [ext, c.languageId ?? ext]
    })
  )
  return { id, extensions, rootMarkers: c.rootMarkers ?? [], resolve: resolveConfigured(program, args) }
}

/** The server table with the configuration applied: configured servers first (they win an extension), then the built-ins left. */
export const serversFromConfig = (
  config: LspConfig | undefined,
  builtins: ReadonlyArray<ServerSpec> = SERVERS
): ReadonlyArray<ServerSpec> => {
  const entries = Object.entries(config?.servers ?? {})
  const named = new Set(entries.map(([id]) => id))
  const configured = entries.flatMap(([id, c]) => (c === false ? [] : [specFrom(id, c)]))
  return [...configured, ...builtins.filter((s) => !named.has(s.id))]
}

/**
 * The `lsp` section. Servers merge by id (the project's entry wins). In a folder that is not
 * trusted, the servers it adds or replaces are left out (they are programs it names); turning a
 * built-in off is kept.
 */
export const lspSection = defineSection<LspConfig, "lsp">({
  key: "lsp",
  schema: LspConfig,
  knownKeys: { lsp: ["servers"], "lsp.servers.*": ["command", "extensions", "languageId", "rootMarkers"] },
  merge: (lower, upper) =>
    lower.servers === undefined || upper.servers === undefined
      ? { ...lower, ...upper }
      : { servers: { ...lower.servers, ...upper.servers } },
  withoutPrograms: (value) => {
    const entries = Object.entries(value.servers ?? {})
    const programs = entries.filter(([, c]) => c !== false).map(([id]) => id)
    const off = entries.filter(([, c]) => c === false)
    return {
      kept: off.length === 0 ? undefined : { servers: Object.fromEntries(off) },
      skipped:
        programs.length === 0 ? [] : [`language server${programs.length === 1 ? "" : "s"} ${programs.join(", ")}`]
    }
  }
})

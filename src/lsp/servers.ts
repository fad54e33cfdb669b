/**
 * The server table: which language server handles a file, how to start it, where its
 * workspace root is. Nothing is downloaded: a server is used only when its binary is in the
 * workspace (TypeScript) or on PATH, and one from the project's own files only when the person
 * trusts it (place.ts). What is looked up on the way (markers, programs, TypeScript's
 * package.json) is read through LocalFs, as the tools read files.
 */
import * as NodePath from "node:path"
import { Effect } from "effect"
import { LocalFs } from "../fs/local-fs.ts"
import { readableError } from "../tool/readable-error.ts"
import { exists, findUp, onPath, type Place, presentUp, untrustedProgram } from "./place.ts"

export { onPath, type Place } from "./place.ts"

export interface ServerCommand {
  readonly command: string
  readonly args: ReadonlyArray<string>
  /** Sent as the initialize request's initializationOptions. */
  readonly initializationOptions?: unknown
}

export interface ServerSpec {
  /** Names the server in messages and keys its clients with the root. */
  readonly id: string
  /** File extensions it handles, with their LSP languageId. */
  readonly extensions: Readonly<Record<string, string>>
  /** Files that mark a workspace root for it, nearest ancestor wins. */
  readonly rootMarkers: ReadonlyArray<string>
  /**
   * How to start it for `root` in `place` (place.ts: what may start there), or why it cannot be
   * started; files are looked up through LocalFs.
   */
  readonly resolve: (root: string, place: Place) => Effect.Effect<ServerResolution, never, LocalFs>
}

/** How to start a server, or why it cannot be started (in words the model can act on). */
export type ServerResolution = ServerCommand | { readonly missing: string }

const utf8 = new TextDecoder()

/** The `version` a package.json names, or why the file cannot tell. */
const versionIn = (
  file: string
): Effect.Effect<{ readonly version: string | undefined } | { readonly missing: string }, never, LocalFs> =>
  Effect.flatMap(Effect.service(LocalFs), (fs) => fs.readFile(file)).pipe(
    Effect.map((bytes) => {
      let parsed: unknown
      try {
        parsed = JSON.parse(utf8.decode(bytes))
      } catch {
        return { missing: `${file} is not valid JSON; reinstall typescript` }
      }
      const version = (parsed as { readonly version?: unknown } | null)?.version
      return { version: typeof version === "string" ? version : undefined }
    }),
    Effect.catch((e) => Effect.succeed({ missing: `${file} cannot be read: ${readableError(e)}` }))
  )

/** The first of `rels` present in a `node_modules` at or above `root`. */
const firstPresentUp = Effect.fnUntraced(function* (root: string, rels: ReadonlyArray<string>) {
  for (const rel of rels) {
    const found = yield* presentUp(root, rel)
    if (found !== undefined) return found
  }
  return undefined
})

/**
 * The workspace's own TypeScript: 7+ has a language server built into `tsc --lsp --stdio`;
 * older versions need `typescript-language-server` (from the workspace or PATH).
 */
const resolveTypeScript = Effect.fnUntraced(function* (root: string, place: Place) {
  // Any server, even one installed elsewhere, would load the workspace's TypeScript and run it.
  const own = yield* firstPresentUp(root, [
    ".bin/tsc",
    ".bin/typescript-language-server",
    "typescript/lib/tsserver.js",
    "typescript/package.json"
  ])
  if (!place.trusted && own !== undefined) return untrustedProgram(place, own)
  const pkg = yield* findUp(root, "typescript/package.json", place)
  const read = pkg === undefined ? { version: undefined } : yield* versionIn(pkg)
  if ("missing" in read) return read
  const { version } = read
  const major = Number(version?.split(".")[0])
  const tsc = yield* findUp(root, ".bin/tsc", place)
  if (major >= 7 && tsc !== undefined) return { command: tsc, args: ["--lsp", "--stdio"] }
  const tls =
    (yield* findUp(root, ".bin/typescript-language-server", place)) ??
    (yield* onPath("typescript-language-server", place))
  // Never the separate syntax server: while the project loads it answers findReferences from the
  // open files alone ("No references found" for the first call on a fresh server).
  if (tls !== undefined) {
    return { command: tls, args: ["--stdio"], initializationOptions: { tsserver: { useSyntaxServer: "never" } } }
  }
  return {
    missing:
      version === undefined
        ? "no TypeScript in the workspace's node_modules (install typescript@7, or typescript-language-server)"
        : `TypeScript ${version} has no built-in language server; install typescript-language-server`
  }
})

const fromPath =
  (binary: string, args: ReadonlyArray<string>): ServerSpec["resolve"] =>
  (_root, place) =>
    Effect.map(
      onPath(binary, place),
      (command): ServerResolution =>
        command === undefined ? { missing: `${binary} is not on PATH` } : { command, args }
    )

export const SERVERS: ReadonlyArray<ServerSpec> = [
  {
    id: "typescript",
    extensions: {
      ts: "typescript",
      tsx: "typescriptreact",
      mts: "typescript",
      cts: "typescript",
      js: "javascript",
      jsx: "javascriptreact",
      mjs: "javascript",
      cjs: "javascript"
    },
    rootMarkers: ["tsconfig.json", "jsconfig.json", "package.json"],
    resolve: resolveTypeScript
  },
  {
    id: "pyright",
    extensions: { py: "python", pyi: "python" },
    rootMarkers: ["pyproject.toml", "setup.py", "pyrightconfig.json"],
    resolve: fromPath("pyright-langserver", ["--stdio"])
  },
  { id: "gopls", extensions: { go: "go" }, rootMarkers: ["go.mod"], resolve: fromPath("gopls", []) },
  {
    id: "rust-analyzer",
    extensions: { rs: "rust" },
    rootMarkers: ["Cargo.toml"],
    resolve: fromPath("rust-analyzer", [])
  },
  {
    id: "clangd",
    extensions: { c: "c", h: "c", cc: "cpp", cpp: "cpp", cxx: "cpp", hpp: "cpp" },
    rootMarkers: ["compile_commands.json", "CMakeLists.txt", ".clangd"],
    resolve: fromPath("clangd", [])
  }
]

/** The server for a file, by extension. */
export const serverFor = (servers: ReadonlyArray<ServerSpec>, file: string): ServerSpec | undefined => {
  const ext = NodePath.extname(file).slice(1).toLowerCase()
  return servers.find((s) => ext in s.extensions)
}

export const languageIdOf = (spec: ServerSpec, file: string): string =>
  spec.extensions[NodePath.extname(file).slice(1).toLowerCase()] ?? spec.id

/** The nearest ancestor of `file` (not above `projectRoot`) holding one of the markers; else the project root. */
export const workspaceRootFor = Effect.fnUntraced(function* (spec: ServerSpec, file: string, projectRoot: string) {
  for (let dir = NodePath.dirname(file); ; dir = NodePath.dirname(dir)) {
    for (const marker of spec.rootMarkers) if (yield* exists(NodePath.join(dir, marker))) return dir
    const rel = NodePath.relative(projectRoot, dir)
    if (rel === "" || rel.startsWith("..") || NodePath.dirname(dir) === dir) return projectRoot
  }
})

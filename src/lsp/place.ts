/**
 * Where a language server's program may come from. A language server runs outside any sandbox
 * with the person's full rights, so a program the project itself holds — its `node_modules/.bin`,
 * a `node_modules` above it, a PATH entry inside it — is the project's code, and starts only in
 * a folder the person trusts (`freecode-tools trust`, or `--trust` for one run), like the
 * project's own MCP servers and hooks (docs/lsp.md). Programs installed elsewhere on PATH start
 * anywhere.
 *
 * Every look goes through `LocalFs`, the file system the tools see: over an in-memory FileSystem
 * a program or a marker is found only where that FileSystem has it, and nothing here reads the
 * host disk.
 */
import * as NodePath from "node:path"
import { Effect } from "effect"
import { LocalFs, type LocalFsShape } from "../fs/local-fs.ts"

/** The project a server is started for, and whether the person trusts it. */
export interface Place {
  readonly projectRoot: string
  readonly trusted: boolean
}

/** A program the place may not start, and why, in words the model can act on. */
export const untrustedProgram = (place: Place, program: string): { readonly missing: string } => ({
  missing:
    `${place.projectRoot} is not trusted, so ${program}, a program from the project's own files, does not start ` +
    `(a language server runs outside any sandbox); to trust it, run 'freecode-tools trust ${place.projectRoot}' ` +
    "(or pass --trust for one run)"
})

/** Whether anything is at `path`, links followed (a link to nothing is nothing). */
export const exists = (path: string): Effect.Effect<boolean, never, LocalFs> =>
  Effect.flatMap(Effect.service(LocalFs), (fs) => present(fs, path))

const present = (fs: LocalFsShape, path: string): Effect.Effect<boolean> =>
  fs.stat(NodePath.resolve(path)).pipe(
    Effect.as(true),
    Effect.orElseSucceed(() => false)
  )

/** Where `path` really is, links followed; the path as named (made absolute) when it cannot be resolved. */
const real = (fs: LocalFsShape, path: string): Effect.Effect<string> => {
  const absolute = NodePath.resolve(path)
  return fs.realPath(absolute).pipe(Effect.orElseSucceed(() => absolute))
}

/** Whether `path` is owned by `uid` or by root; false when the file system cannot say (fail closed). */
const ownedBy = (fs: LocalFsShape, path: string, uid: number): Effect.Effect<boolean> =>
  fs.stat(path).pipe(
    Effect.map(({ owner }) => owner === uid || owner === 0),
    Effect.orElseSucceed(() => false)
  )

const within = (dir: string, p: string) => p === dir || p.startsWith(dir.endsWith("/") ? dir : `${dir}/`)

/**
 * Whether `file` (a program, or a PATH folder) is the project's own: below the project root, or
 * in a `node_modules` at or above it — where Node, and a server, would find the project's
 * packages. Links are followed first, so a link elsewhere that leads in counts too.
 */
export const isProjectProgram = Effect.fnUntraced(function* (place: Place, file: string) {
  const fs = yield* LocalFs
  const at = yield* real(fs, file)
  const root = yield* real(fs, place.projectRoot)
  if (within(root, at)) return true
  for (let dir = root; ; dir = NodePath.dirname(dir)) {
    if (within(NodePath.join(dir, "node_modules"), at)) return true
    if (NodePath.dirname(dir) === dir) return false
  }
})

/**
 * `name` in one of PATH's folders (as an absolute path), or undefined. Without a place (or in a
 * trusted one) every entry counts; in an untrusted place, relative entries (they mean the current
 * folder) and entries that are the project's own (isProjectProgram) are skipped.
 */
export const onPath = Effect.fnUntraced(function* (name: string, place?: Place) {
  const fs = yield* LocalFs
  for (const dir of (process.env.PATH ?? "").split(NodePath.delimiter)) {
    if (dir === "") continue
    if (place !== undefined && !place.trusted) {
      if (!NodePath.isAbsolute(dir) || (yield* isProjectProgram(place, dir))) continue
    }
    // Absolute, so the program checked is the one started, whatever folder the server starts in.
    const candidate = NodePath.resolve(dir, name)
    if (yield* present(fs, candidate)) return candidate
  }
  return undefined
})

/**
 * The nearest `node_modules/<rel>` at or above `root`; undefined in an untrusted place (every one
 * is the project's). Above the project root only when that `node_modules` and the file are owned
 * by this user or by root: one someone else planted in a shared folder (`/tmp/node_modules`) is
 * not used, nor one whose owner the file system cannot tell.
 */
export const findUp = Effect.fnUntraced(function* (root: string, rel: string, place: Place) {
  if (!place.trusted) return undefined
  const fs = yield* LocalFs
  const projectRoot = yield* real(fs, place.projectRoot)
  const uid = process.getuid?.()
  for (let dir = root; ; dir = NodePath.dirname(dir)) {
    const candidate = NodePath.join(dir, "node_modules", rel)
    if (yield* present(fs, candidate)) {
      if (within(projectRoot, yield* real(fs, dir)) || uid === undefined) return candidate
      const ours = (yield* ownedBy(fs, NodePath.join(dir, "node_modules"), uid)) && (yield* ownedBy(fs, candidate, uid))
      return ours ? candidate : undefined
    }
    if (NodePath.dirname(dir) === dir) return undefined
  }
})

/** The nearest `node_modules/<rel>` at or above `root`, trusted or not: what a server would load. */
export const presentUp = Effect.fnUntraced(function* (root: string, rel: string) {
  const fs = yield* LocalFs
  for (let dir = root; ; dir = NodePath.dirname(dir)) {
    const candidate = NodePath.join(dir, "node_modules", rel)
    if (yield* present(fs, candidate)) return candidate
    if (NodePath.dirname(dir) === dir) return undefined
  }
})

/**
 * Where a language server's program may come from. A language server runs outside any sandbox
 * with the person's full rights, so a program the project itself holds — its `node_modules/.bin`,
 * a `node_modules` above it, a PATH entry inside it — is the project's code, and starts only in
 * a folder the person trusts (`freecode-tools trust`, or `--trust` for one run), like the
 * project's own MCP servers and hooks (docs/lsp.md). Programs installed elsewhere on PATH start
 * anywhere.
 */
import { existsSync, realpathSync, statSync } from "node:fs"
import * as NodePath from "node:path"

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

const real = (p: string): string => {
  try {
    return realpathSync(p)
  } catch {
    return NodePath.resolve(p)
  }
}

const within = (dir: string, p: string) => p === dir || p.startsWith(dir.endsWith("/") ? dir : `${dir}/`)

/**
 * Whether `file` (a program, or a PATH folder) is the project's own: below the project root, or
 * in a `node_modules` at or above it — where Node, and a server, would find the project's
 * packages. Links are followed first, so a link elsewhere that leads in counts too.
 */
export const isProjectProgram = (place: Place, file: string): boolean => {
  const at = real(file)
  const root = real(place.projectRoot)
  if (within(root, at)) return true
  for (let dir = root; ; dir = NodePath.dirname(dir)) {
    if (within(NodePath.join(dir, "node_modules"), at)) return true
    if (NodePath.dirname(dir) === dir) return false
  }
}

/**
 * `name` in one of PATH's folders, or undefined. Without a place (or in a trusted one) every
 * entry counts; in an untrusted place, relative entries (they mean the current folder) and
 * entries that are the project's own (isProjectProgram) are skipped.
 */
export const onPath = (name: string, place?: Place): string | undefined => {
  for (const dir of (process.env.PATH ?? "").split(NodePath.delimiter)) {
    if (dir === "") continue
    if (place !== undefined && !place.trusted && (!NodePath.isAbsolute(dir) || isProjectProgram(place, dir))) continue
    const candidate = NodePath.join(dir, name)
    if (existsSync(candidate)) return candidate
  }
  return undefined
}

/**
 * The nearest `node_modules/<rel>` at or above `root`; undefined in an untrusted place (every one
 * is the project's). Above the project root only when that `node_modules` and the file are owned
 * by this user or by root: one someone else planted in a shared folder (`/tmp/node_modules`) is
 * not used.
 */
export const findUp = (root: string, rel: string, place: Place): string | undefined => {
  if (!place.trusted) return undefined
  const projectRoot = real(place.projectRoot)
  const uid = process.getuid?.()
  for (let dir = root; ; dir = NodePath.dirname(dir)) {
    const candidate = NodePath.join(dir, "node_modules", rel)
    if (existsSync(candidate)) {
      const above = !within(projectRoot, real(dir))
      const ours = (p: string) => uid === undefined || ownedBy(p, uid)
      return above && !(ours(NodePath.join(dir, "node_modules")) && ours(candidate)) ? undefined : candidate
    }
    if (NodePath.dirname(dir) === dir) return undefined
  }
}

/** The nearest `node_modules/<rel>` at or above `root`, trusted or not: what a server would load. */
export const presentUp = (root: string, rel: string): string | undefined => {
  for (let dir = root; ; dir = NodePath.dirname(dir)) {
    const candidate = NodePath.join(dir, "node_modules", rel)
    if (existsSync(candidate)) return candidate
    if (NodePath.dirname(dir) === dir) return undefined
  }
}

const ownedBy = (dir: string, uid: number): boolean => {
  try {
    const owner = statSync(dir).uid
    return owner === uid || owner === 0
  } catch {
    return false
  }
}

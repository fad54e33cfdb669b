/**
 * Where a write to a path lands: every symbolic link on the way followed, the last component
 * too, also when it is a link to something that does not exist yet (a dangling link, which a
 * write would create at its target) and when the rest of the path does not exist. This is the
 * path permissions are checked on, locks are keyed by and writes go to, so a link cannot make a
 * write land outside what was checked.
 */
import * as NFS from "node:fs"
import * as NodePath from "node:path"
import { Effect } from "effect"

/** More links than this on one path is a loop (as the kernel's ELOOP). */
export const MAX_LINKS = 40

/** One component of a path: a link (with its target), there and not a link, or missing (so is all below it). */
export type Component = { readonly link: string } | "plain" | "missing"

/**
 * The walk, over any way of inspecting a component (node:fs here, a FileSystem service in the
 * platform write layer), so every layer lands a write by the same rules.
 */
export const landingPathWith = <E, R>(
  abs: string,
  inspect: (path: string) => Effect.Effect<Component, E, R>
): Effect.Effect<string | undefined, E, R> =>
  Effect.gen(function* () {
    const pending = abs.split("/").filter((p) => p !== "" && p !== ".")
    let at = "/"
    let links = 0
    let missing = false
    while (pending.length > 0) {
      const part = pending.shift()!
      if (part === "..") {
        at = NodePath.posix.dirname(at)
        continue
      }
      const next = at === "/" ? `/${part}` : `${at}/${part}`
      const component = missing ? "missing" : yield* inspect(next)
      if (typeof component === "string") {
        // Not a link, or missing from here on: taken as it is.
        if (component === "missing") missing = true
        at = next
        continue
      }
      if (++links > MAX_LINKS) return undefined
      pending.unshift(...component.link.split("/").filter((p) => p !== "" && p !== "."))
      if (component.link.startsWith("/")) at = "/"
    }
    return at
  })

const inspectOnDisk = (path: string): Effect.Effect<Component> =>
  Effect.sync(() => {
    try {
      return { link: NFS.readlinkSync(path) }
    } catch (e) {
      // Not a link (EINVAL), or missing from here on (ENOENT, ENOTDIR).
      return (e as NodeJS.ErrnoException).code === "EINVAL" ? "plain" : "missing"
    }
  })

/** The absolute path a write to `abs` (absolute) lands on, on this machine's disk; undefined for a link loop. */
export const landingPath = (abs: string): string | undefined => Effect.runSync(landingPathWith(abs, inspectOnDisk))

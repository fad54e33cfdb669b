/**
 * Where a write to a path lands: every symbolic link on the way followed, the last component
 * too, also when it is a link to something that does not exist yet (a dangling link, which a
 * write would create at its target) and when the rest of the path does not exist. This is the
 * path permissions are checked on, locks are keyed by and writes go to, so a link cannot make a
 * write land outside what was checked.
 */
import * as NFS from "node:fs"
import * as NodePath from "node:path"

/** More links than this on one path is a loop (as the kernel's ELOOP). */
export const MAX_LINKS = 40

/** The absolute path a write to `abs` (absolute) lands on; undefined for a link loop. */
export const landingPath = (abs: string): string | undefined => {
  const pending = abs.split("/").filter((p) => p !== "" && p !== ".")
  let at = "/"
  let links = 0
  let missing = false
  while (pending.length > 0) {
    const part = pending.shift()!
    if (part === "..") {
      at = NodePath.dirname(at)
      continue
    }
    const next = at === "/" ? `/${part}` : `${at}/${part}`
    if (missing) {
      at = next
      continue
    }
    let target: string
    try {
      target = NFS.readlinkSync(next)
    } catch (e) {
      // Not a link (EINVAL), or missing from here on (ENOENT, ENOTDIR): taken as it is.
      if ((e as NodeJS.ErrnoException).code !== "EINVAL") missing = true
      at = next
      continue
    }
    if (++links > MAX_LINKS) return undefined
    pending.unshift(...target.split("/").filter((p) => p !== "" && p !== "."))
    if (target.startsWith("/")) at = "/"
  }
  return at
}

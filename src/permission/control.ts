/**
 * Whether a file tool's write lands on a control path (src/sandbox/control-paths.ts): a file that
 * later runs code, or widens what may run, with the person's full rights. Such a write always
 * asks (decide.ts), whatever allow rules, saved approvals and acceptEdits say.
 *
 * A path is checked as given and as it really is (links followed, subjects.ts), and at every
 * depth: git reads `.git` and `.gitattributes` of a nested repository too, direnv an `.envrc` in
 * any folder, an editor the `.vscode` of any folder it opens. Names are compared without case
 * (controlPathOf), and with what some file systems drop from a name removed first: trailing dots
 * and spaces (Windows) and the code points HFS+ ignores, so `.git.` and `.g\u200cit` are `.git`.
 */
import { CONTROL_PATHS, controlPathOf } from "../sandbox/control-paths.ts"
import { within } from "./containment.ts"

// Ignorable code points of HFS+ (the list git itself refuses in `.git`), and a name's trailing dots and spaces.
const IGNORED = /[\u200c-\u200f\u202a-\u202e\u206a-\u206f\ufeff]/g
const TRAILING = /[. ]+$/

const segmentsOf = (rel: string): ReadonlyArray<string> =>
  rel
    .split("/")
    .filter((s) => s !== "" && s !== ".")
    .map((s) => {
      const bare = s.replace(IGNORED, "")
      // `.` and `..` stay as they are (a clean path has none; a name of dots alone is not stripped).
      return /^\.+$/.test(bare) ? bare : bare.replace(TRAILING, "")
    })

/** The control path `rel` (below some folder) is or lies in, at any depth; undefined when none. */
export const controlPathAnywhere = (rel: string): string | undefined => {
  const segments = segmentsOf(rel)
  for (let i = 0; i < segments.length; i++) {
    // Only where a control path's first name starts: most names rule themselves out at once.
    if (!FIRST_NAMES.has(segments[i]!.toLowerCase())) continue
    const hit = controlPathOf(segments.slice(i).join("/"))
    if (hit !== undefined) return hit
  }
  return undefined
}

/**
 * The control path an absolute path `abs` is or lies in. Below `root` only the part below it is
 * looked at (a project kept in a folder named `.idea` is not one whole control path); elsewhere
 * the whole path.
 */
export const controlPathAt = (root: string, abs: string): string | undefined => {
  const rel = within(root, abs) ? abs.slice(root.length) : abs
  return controlPathAnywhere(rel)
}

/** The first name of each control path (`.git`, `freecode.json`, ...). */
const FIRST_NAMES = new Set(CONTROL_PATHS.map((c) => c.path.split("/")[0]!))

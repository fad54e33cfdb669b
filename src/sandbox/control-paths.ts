/**
 * Control paths: files inside a writable place (the project root) that later run code, or widen
 * what may run, with the person's full rights and outside the sandbox — git's hooks and config
 * (`core.fsmonitor`, `core.hooksPath`, `diff.*.textconv`, aliases), the attributes that select
 * git's drivers, this project's own configuration (`freecode.json`, `.mcp.json`), and the editor
 * and agent settings that open or run things (`.vscode`, `.claude`, `.envrc`). The one list: the
 * sandbox keeps them read-only (and their parents from being swapped out), and edit, write and
 * apply_patch always ask before touching one, whatever the mode (docs/sandbox.md,
 * docs/permissions.md).
 *
 * What is not here on purpose: the project's own code (package.json scripts, Makefiles, tests)
 * runs only when the person chooses to run the project, and a sandbox that kept it read-only
 * would keep the model from working at all. The package managers' project settings (`.npmrc`'s
 * `script-shell`, `.yarnrc.yml`'s `yarnPath`, `.pnpmfile.cjs`) are of that kind: they run when
 * the person runs the project's tooling, as its scripts do.
 */

/** Relative to a writable root. A folder covers everything below it. */
export const CONTROL_PATHS: ReadonlyArray<{ readonly path: string; readonly directory: boolean }> = [
  { path: ".git/hooks", directory: true },
  { path: ".git/config", directory: false },
  { path: ".git/config.worktree", directory: false },
  // Names another folder as the repository's common one, whose config and hooks git then uses.
  { path: ".git/commondir", directory: false },
  // Whole, not just `info/attributes`: a file replaced by a rename inside a read-only folder stays
  // read-only, where a file's own bind is lifted (docs/sandbox.md, "replaced from outside").
  { path: ".git/info", directory: true },
  { path: ".git/modules", directory: true },
  // Each worktree's own `commondir`, `config.worktree` and `gitdir`: git run there follows them.
  { path: ".git/worktrees", directory: true },
  // An interrupted rebase's plan: its `exec` lines run on the person's `git rebase --continue`.
  { path: ".git/rebase-merge", directory: true },
  { path: ".git/rebase-apply", directory: true },
  { path: ".gitattributes", directory: false },
  { path: ".gitmodules", directory: false },
  { path: "freecode.json", directory: false },
  { path: ".mcp.json", directory: false },
  { path: ".freecode", directory: true },
  { path: ".claude", directory: true },
  { path: ".vscode", directory: true },
  { path: ".idea", directory: true },
  // Other editors' and agents' project settings: MCP servers they start, language-server and
  // task commands, a dev container's lifecycle commands — run when the person opens the project.
  { path: ".cursor", directory: true },
  { path: ".gemini", directory: true },
  { path: ".codex", directory: true },
  { path: ".amazonq", directory: true },
  { path: ".continue", directory: true },
  { path: ".kiro", directory: true },
  { path: ".roo", directory: true },
  { path: ".windsurf", directory: true },
  { path: ".zed", directory: true },
  { path: ".helix", directory: true },
  { path: ".devcontainer", directory: true },
  { path: ".envrc", directory: false }
]

/**
 * The control path `rel` (a path relative to a writable root, `/`-separated, no `.` or `..`
 * segments) is, or lies inside; undefined when it is none. Compared without case: on a
 * case-insensitive file system `.GIT/Config` is `.git/config`, and refusing the other spelling on
 * a case-sensitive one costs nothing real.
 */
export const controlPathOf = (rel: string): string | undefined => {
  const lower = rel.toLowerCase()
  for (const c of CONTROL_PATHS) {
    if (lower === c.path || (lower.startsWith(c.path) && lower.charCodeAt(c.path.length) === 47)) return c.path
    // A folder that holds a control path (`.git`, `.git/info`) is one too: replacing or renaming
    // it swaps the control path out from under its protection.
    if (c.path.startsWith(`${lower}/`)) return c.path
  }
  return undefined
}

/** The first names of the control paths, lower case: at any depth, a folder holding one is a repository or project of its own. */
export const CONTROL_NAMES: ReadonlySet<string> = new Set(CONTROL_PATHS.map((c) => c.path.split("/")[0]!))

/** Whether a folder entry's name is one of CONTROL_NAMES (compared without case, as controlPathOf). */
export const isControlName = (name: string): boolean => CONTROL_NAMES.has(name.toLowerCase())

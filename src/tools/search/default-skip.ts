/**
 * Folders a search skips unless told otherwise: dependencies, other version-control systems'
 * data and build caches, which no one means to list or search and which can hold most of a
 * tree's files (a fresh `npm init` project with one install: ~330 paths, nearly all under
 * node_modules). Skipped only when no .gitignore rule names them: a rule that ignores one
 * hides it anyway, and a `!` rule that re-includes one is obeyed. A directory named in `path`
 * is searched (naming it is explicit), as with .gitignore. `.git` is never searched at all.
 *
 * Names that are as often source folders (`build`, `dist`, `out`, `target`, `lib`, `vendor`) are
 * left to the project's .gitignore.
 */
// biome-ignore format: a word list
export const DEFAULT_SKIP: ReadonlySet<string> = new Set([
  // dependencies
  "node_modules", "bower_components", "jspm_packages", ".pnpm-store", ".venv", "__pypackages__",
  // other version-control systems
  ".hg", ".svn", ".jj", ".bzr",
  // build and tool caches
  "__pycache__", ".tox", ".nox", ".mypy_cache", ".pytest_cache", ".ruff_cache", ".gradle",
  ".next", ".nuxt", ".svelte-kit", ".turbo", ".parcel-cache", ".angular"
])

/** The same folders as ignore-file lines (lowest precedence in rg: any .gitignore rule wins). */
export const DEFAULT_SKIP_IGNORE_FILE = `${[...DEFAULT_SKIP].map((name) => `${name}/`).join("\n")}\n`

/** The line a search adds when it skipped some: which, and how to search one. */
export const skippedNote = (skipped: ReadonlyArray<string>, shown: (abs: string) => string, total?: number): string => {
  const count = total ?? skipped.length
  const names = skipped.slice(0, 3).map((p) => `${shown(p)}/`)
  const more = count > names.length ? ` and ${count - names.length} more` : ""
  const what = count === 1 ? "a dependency/build folder" : "dependency/build folders"
  return `(Skipped ${names.join(", ")}${more}: ${what} that no .gitignore names. To include one, pass it as path, e.g. path "${shown(skipped[0]!)}".)`
}

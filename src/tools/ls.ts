/**
 * `ls`: a directory tree, .gitignore respected, hidden entries shown, `.git` never.
 *
 * Output: the listed directory on the first line (ending with `/`), then one entry per line
 * indented two spaces per level; directories end with `/`, symbolic links show their target
 * (`name -> target`, not followed). Inside a directory: subdirectories first, then files, each
 * by name. At most 1,000 entries are shown, chosen breadth-first so the top levels are always
 * complete; a directory whose entries were left out says how many (`[+N not shown]`) and a
 * last line gives the total and how to narrow.
 *
 * Dependency and build folders no .gitignore names (node_modules, .venv, …) are skipped, and a
 * line says which and how to list one (search/default-skip.ts).
 *
 * ls walks with the LocalFs service even when rg is available: rg cannot list directories
 * (and ls must show empty ones). It shares the .gitignore rules of the walk backend. With the
 * warm index on, a directory with many entries below it is listed from the index instead, with
 * the same result (search/tree.ts; docs/search.md).
 */
import { Effect, FileSystem, Schema } from "effect"
import { displayDir, displayPath, resolvePath } from "../path/path.ts"
import { plural } from "../text/plural.ts"
import { fail } from "../tool/errors.ts"
import { searchesBelow } from "../tool/presets.ts"
import { defineTool } from "../tool/tool.ts"
import { fsFailure, notFoundMessage } from "./failures/fs.ts"
import { CurrentSearchBackend } from "./search/auto.ts"
import { skippedNote } from "./search/default-skip.ts"
import { makeMatcher } from "./search/ignore.ts"
import { isIndexed } from "./search/indexed.ts"
import { DENIED, hiddenFrom, hiddenNote } from "./search/visibility.ts"
import { type WalkEntry, type WalkResult, walkTree } from "./search/walk.ts"

export const MAX_LS_ENTRIES = 1000
/** Past this many entries the walk stops counting ("at least N more"). */
export const LS_SCAN_LIMIT = 100_000

const Parameters = Schema.Struct({
  path: Schema.optionalKey(
    Schema.String.annotate({
      description: "Directory to list, absolute or relative to the project root (default: the project root)."
    })
  ),
  ignore: Schema.optionalKey(
    Schema.Array(Schema.String).annotate({
      description: 'Extra gitignore-style patterns to skip, e.g. ["dist/", "*.snap"].'
    })
  )
})

/**
 * A directory's entries as ls shows them: subdirectories first, then the rest, each in the
 * walk's name order (a stable split, no second sort). Hidden entries are left out. Most often
 * nothing is hidden and no directory comes after a file: the walk's array is then shown as it is.
 */
const displayOrder = (
  entries: ReadonlyArray<WalkEntry>,
  hidden: (abs: string) => boolean
): ReadonlyArray<WalkEntry> => {
  let sawFile = false
  for (let i = 0; i < entries.length; i++) {
    const e = entries[i]!
    const isDir = e.kind === "dir"
    if (hidden(e.path) || (isDir && sawFile)) return splitOrder(entries, i, hidden)
    if (!isDir) sawFile = true
  }
  return entries
}

/** displayOrder's split, from `from` on (the entries before it are in order and shown). */
const splitOrder = (
  entries: ReadonlyArray<WalkEntry>,
  from: number,
  hidden: (abs: string) => boolean
): Array<WalkEntry> => {
  const dirs: Array<WalkEntry> = []
  const rest: Array<WalkEntry> = []
  for (let i = 0; i < entries.length; i++) {
    const e = entries[i]!
    if (i < from || !hidden(e.path)) (e.kind === "dir" ? dirs : rest).push(e)
  }
  return dirs.length === 0 ? rest : dirs.concat(rest)
}

/** The entries ls shows, and the symbolic links among them (whose targets it shows). */
interface Chosen {
  readonly has: (entry: WalkEntry) => boolean
  readonly size: number
  readonly links: ReadonlyArray<WalkEntry>
  /** Every entry the rules let the caller see (below a hidden directory nothing is). */
  readonly visible: number
  /** Entries the rules hide, in the directories the caller sees. */
  readonly hidden: number
}

const all = () => true

/**
 * At most MAX_LS_ENTRIES entries, level by level in display order from `dir`. When every
 * visible entry fits (the usual case), nothing is chosen: all that rendering visits is shown.
 * `hiddenIn`: how many entries the rules hide in each directory.
 */
const chooseBreadthFirst = (
  dir: string,
  children: ReadonlyMap<string, ReadonlyArray<WalkEntry>>,
  hiddenIn: ReadonlyMap<string, number>
): Chosen => {
  let visible = 0
  let hidden = 0
  const allLinks: Array<WalkEntry> = []
  const visit = (parent: string) => {
    hidden += hiddenIn.get(parent) ?? 0
    for (const e of children.get(parent) ?? []) {
      visible++
      if (e.kind === "dir") visit(e.path)
      else if (e.kind === "symlink") allLinks.push(e)
    }
  }
  visit(dir)
  if (visible <= MAX_LS_ENTRIES) return { has: all, size: visible, links: allLinks, visible, hidden }
  const order: Array<WalkEntry> = []
  let capped = false
  let frontier: Array<string> = [dir]
  while (frontier.length > 0 && !capped) {
    const next: Array<string> = []
    for (const parent of frontier) {
      for (const entry of children.get(parent) ?? []) {
        if (order.length >= MAX_LS_ENTRIES) {
          capped = true
          break
        }
        order.push(entry)
        if (entry.kind === "dir") next.push(entry.path)
      }
      if (capped) break
    }
    frontier = next
  }
  // Held by identity: hashing each path string would cost more than the walk that made it.
  const set = new Set(order)
  return {
    has: (entry) => set.has(entry),
    size: order.length,
    links: order.filter((e) => e.kind === "symlink"),
    visible,
    hidden
  }
}

/** Where each symbolic link points (one that cannot be read is shown without a target). */
const linkTargets = (
  entries: ReadonlyArray<WalkEntry>
): Effect.Effect<ReadonlyMap<string, string>, never, FileSystem.FileSystem> =>
  Effect.flatMap(FileSystem.FileSystem, (fs) =>
    Effect.map(
      Effect.forEach(entries, (e) => Effect.option(fs.readLink(e.path))),
      (targets) => {
        const links = new Map<string, string>()
        targets.forEach((target, i) => {
          if (target._tag === "Some") links.set(entries[i]!.path, target.value)
        })
        return links
      }
    )
  )

interface Tree {
  readonly root: string
  readonly dir: string
  readonly walked: WalkResult
  readonly children: ReadonlyMap<string, ReadonlyArray<WalkEntry>>
  readonly chosen: Chosen
  /** Listed from the warm index rather than walked. */
  readonly fromIndex: boolean
}

/** The listing as ls shows it, with the lines that say what was left out and why. */
const render = ({ root, dir, walked, children, chosen, fromIndex }: Tree, links: ReadonlyMap<string, string>) => {
  const shownDir = displayDir(root, dir)
  const lines: Array<string> = [shownDir]
  const renderLevel = (parent: string, depth: number) => {
    const entries = children.get(parent) ?? []
    const indent = "  ".repeat(depth)
    let hidden = 0
    for (const entry of entries) {
      if (!chosen.has(entry)) {
        hidden++
        continue
      }
      const link = links.size === 0 ? undefined : links.get(entry.path)
      if (entry.kind === "dir") {
        const sub = children.get(entry.path)
        const omitted = sub === undefined ? 0 : sub.filter((s) => !chosen.has(s)).length
        const notWalked = sub === undefined && !walked.complete
        lines.push(
          `${indent}${entry.name}/${omitted > 0 ? ` [+${omitted} not shown]` : notWalked ? " [not shown]" : ""}`
        )
        renderLevel(entry.path, depth + 1)
      } else {
        lines.push(`${indent}${entry.name}${link === undefined ? "" : ` -> ${link}`}`)
      }
    }
    return hidden
  }
  const hiddenAtTop = renderLevel(dir, 1)
  if (hiddenAtTop > 0) lines.push(`  [+${hiddenAtTop} not shown]`)

  // What the rules hide is not counted: "the rest" is what a narrower call would show.
  const total = chosen.visible
  const shown = chosen.size
  if (walked.entries === 0) lines.push("(empty directory)")
  if (chosen.hidden > 0) lines.push(hiddenNote(chosen.hidden, "", ["entry", "entries"]))
  if (walked.skipped.length > 0) lines.push(skippedNote(walked.skipped, (p) => displayPath(root, p)))
  if (shown < total || !walked.complete) {
    lines.push(
      `(Showing ${shown} of ${walked.complete ? total : `more than ${total}`} entries. Pass a deeper path or ignore patterns to see the rest.)`
    )
  }
  if (walked.unreadable.length > 0) {
    lines.push(
      `(${walked.unreadable.length} directories could not be read: ${walked.unreadable
        .slice(0, 3)
        .map((p) => displayPath(root, p))
        .join(", ")})`
    )
  }
  return {
    title: `${shownDir} (${plural(total, "entry", "entries")})`,
    output: lines.join("\n"),
    metadata: {
      path: dir,
      entries: total,
      shown,
      truncated: shown < total || !walked.complete,
      ...(walked.skipped.length > 0 ? { skipped: walked.skipped.length } : {}),
      ...(fromIndex ? { backend: "index" } : {})
    }
  }
}

export const LsTool = defineTool({
  id: "ls",
  description:
    "List a directory as an indented tree (directories end with /), .gitignore respected, hidden entries shown. Shows at most 1,000 entries, top levels first; pass a deeper path or ignore patterns to narrow. Use glob to find files by name and grep to search contents.",
  parameters: Parameters,
  ...searchesBelow("file.read"),
  // Hand-chained: every ls passes through here (docs/architecture.md).
  execute: ({ path, ignore }, ctx) => {
    const dir = resolvePath(ctx.root, path ?? ".")
    // No stat of its own first: reading the directory (or finding its kept listing) says all
    // a stat would (missing, not a directory), one file-system round trip sooner.
    const request = {
      root: ctx.root,
      dir,
      maxEntries: LS_SCAN_LIMIT,
      ...(ignore === undefined || ignore.length === 0 ? {} : { extraIgnore: makeMatcher(ignore) })
    }
    let fromIndex = false
    const walk = Effect.flatMap(CurrentSearchBackend, (backend) =>
      isIndexed(backend)
        ? Effect.flatMap(backend.tree(request), (held) => {
            fromIndex = held !== undefined
            return held === undefined ? walkTree(request) : Effect.succeed(held)
          })
        : walkTree(request)
    ).pipe(
      Effect.catchTag("PlatformError", (e) =>
        e.reason._tag === "NotFound"
          ? Effect.flatMap(FileSystem.FileSystem, (fs) =>
              Effect.flatMap(notFoundMessage(fs, ctx.root, dir, "Directory"), (m) => Effect.fail(fail(m)))
            )
          : e.reason._tag === "BadResource"
            ? Effect.fail(fail(`${displayPath(ctx.root, dir)} is not a directory; use read to see a file.`))
            : Effect.fail(fsFailure(e, ctx.root, dir))
      )
    )
    return Effect.flatMap(walk, (walked) => {
      // What a deny rule names is not listed, as it could not be read.
      const hidden = hiddenFrom(ctx, DENIED)
      const children = new Map<string, ReadonlyArray<WalkEntry>>()
      const hiddenIn = new Map<string, number>()
      for (const d of walked.dirs) {
        const shown = displayOrder(d.entries, hidden)
        children.set(d.path, shown)
        if (shown.length < d.entries.length) hiddenIn.set(d.path, d.entries.length - shown.length)
      }
      // Choose breadth-first, in display order, so the top levels are always complete.
      const chosen = chooseBreadthFirst(dir, children, hiddenIn)
      const tree = { root: ctx.root, dir, walked, children, chosen, fromIndex }
      if (chosen.links.length === 0) return Effect.succeed(render(tree, new Map()))
      return Effect.map(linkTargets(chosen.links), (links) => render(tree, links))
    })
  }
})

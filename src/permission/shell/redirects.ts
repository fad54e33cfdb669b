/**
 * What a redirection may do. bash opens `/dev/tcp/HOST/PORT` and `/dev/udp/HOST/PORT` itself as
 * network connections (no such file exists), so a redirection there reaches the network under any
 * rule: it is refused. So is a target only known when it runs (`< $x`), which may name one.
 */
import type { Word } from "./analysis.ts"

export interface Judged {
  /** Refused whatever the rules say. */
  readonly refuse?: string
  /** Needs approval: no prefix rule vouches for it. */
  readonly concern?: string
  /** bash reads it otherwise than the grammar: it asks, and a deny rule that could match refuses. */
  readonly unsure?: string
}

/** The path with `//`, `/./` and `..` folded, as a file system would read it. */
const fold = (path: string): string => {
  const out: Array<string> = []
  for (const part of path.split("/")) {
    if (part === "" || part === ".") continue
    if (part === "..") out.pop()
    else out.push(part)
  }
  return `${path.startsWith("/") ? "/" : ""}${out.join("/")}`
}

/** Whether a target names bash's network pseudo-files, however it is spelled. */
export const isNetworkPath = (value: string): boolean => /^\/dev\/(tcp|udp)(\/|$)/.test(fold(value))

const INERT_OUTPUT = new Set([">", ">>", "&>", "&>>", ">|", ">&", "<>"])

/** Judges one redirection from its operator and target words. */
export const judgeRedirect = (operator: string, targets: ReadonlyArray<Word>): Judged => {
  // Closing a descriptor (`>&-`, `0<&-`) names no file. A word touching it (`3>&-.env`) is the
  // grammar's target but, to bash, a word of the command: `cat 3>&-.env` prints .env.
  if (operator === ">&-" || operator === "<&-")
    return targets.length === 0
      ? {}
      : {
          unsure: `bash reads ${targets.map((t) => t.text).join(" ")} after ${operator} as a word of the command, not as part of the redirection`
        }
  const dynamic = targets.find((t) => t.shape === "dynamic")
  if (dynamic !== undefined)
    return {
      refuse: `it redirects to a target only known when it runs (${dynamic.text}), which may open a network connection (/dev/tcp)`
    }
  const network = targets.find((t) => isNetworkPath(t.value))
  if (network !== undefined) return { refuse: `it opens a network connection through a redirection (${network.text})` }
  const target = targets.length === 1 ? targets[0]! : undefined
  if (target === undefined) return { concern: "it uses a redirection this check does not model" }
  if (target.shape === "pattern") return { concern: `it redirects to a pattern bash expands (${target.text})` }
  if (operator === "<") return {}
  // Duplicating, closing or moving (`3-`) a descriptor names no file.
  if ((operator === ">&" || operator === "<&") && /^(\d+-?|-)$/.test(target.value)) return {}
  if (INERT_OUTPUT.has(operator) && target.value === "/dev/null") return {}
  // `<>` opens its file for writing too (and creates it): a write, like `>`.
  if (operator === "<>") return { concern: `it opens a file for reading and writing (${operator}${target.text})` }
  return { concern: `it redirects output into a file (${operator}${target.text})` }
}

/**
 * What a search may show: the permission rules the call runs under (ToolContext.searchable) hide
 * files a deny rule names from grep, glob and ls, and the contents of .env-like files from grep,
 * as they would be hidden from read. Without the Dispatcher (a tool run directly), nothing is.
 */
import type { Searchable, ToolContext } from "../../tool/tool.ts"

/** A predicate: is this file hidden? `hide`: the verdicts that hide. */
export const hiddenFrom = (ctx: ToolContext, hide: ReadonlySet<Searchable>): ((abs: string) => boolean) => {
  const check = ctx.searchable
  if (check === undefined) return () => false
  // No memo: the check is a regex and the deny rules naming the tool, cheaper than a Map.
  // A search that hides only denied files is not made to test each name for secrets.
  const secrets = hide.has("secret")
  return (abs) => hide.has(check(abs, secrets))
}

export const DENIED: ReadonlySet<Searchable> = new Set(["denied"])
export const DENIED_OR_SECRET: ReadonlySet<Searchable> = new Set(["denied", "secret"])

/** The line a search adds when it left files out, so the model knows why they are missing. */
export const hiddenNote = (
  count: number,
  what: string,
  noun: readonly [one: string, many: string] = ["file", "files"]
): string =>
  `(${count} ${count === 1 ? noun[0] : noun[1]}${what === "" ? "" : ` ${what}`} ${count === 1 ? "is" : "are"} not shown: the project's permission rules keep ${count === 1 ? "it" : "them"} from you (a deny rule, or a .env-like file that needs approval to read).)`

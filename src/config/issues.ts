/** A schema's complaint about a config value, as one line per problem naming the key. */
import { SchemaIssue } from "effect"

const formatIssues = SchemaIssue.makeFormatterStandardSchemaV1()

const isContainer = (v: unknown): v is Record<PropertyKey, unknown> => typeof v === "object" && v !== null

export const renderPath = (path: ReadonlyArray<PropertyKey>): string =>
  path.map((k, i) => (typeof k === "number" ? `[${k}]` : i === 0 ? String(k) : `.${String(k)}`)).join("")

/** The keys an object at `parent` may hold, from a section's table ("[]" any index, "*" any name). */
export type KnownKeysAt = (parent: ReadonlyArray<PropertyKey>) => ReadonlyArray<string> | undefined

/** Every problem, one line each: `key.path: what was expected, what came`. */
export const describeIssues = (
  issue: SchemaIssue.Issue,
  input: unknown,
  knownKeysAt: KnownKeysAt,
  /** Where the decoded value sits in `input` (a section's key). */
  prefix: ReadonlyArray<PropertyKey> = []
): Array<string> =>
  formatIssues(issue).issues.map((i) => {
    const path = [
      ...prefix,
      ...(i.path ?? []).map((p) =>
        typeof p === "object" && p !== null && "key" in p ? (p as { key: PropertyKey }).key : p
      )
    ] as Array<PropertyKey>
    const where = path.length === 0 ? "(top level)" : renderPath(path)
    if (/excess|unexpected/i.test(i.message)) {
      const known = knownKeysAt(path.slice(0, -1))
      return `${where}: unknown key${known === undefined ? "" : `; expected one of ${known.join(", ")}`}`
    }
    let got: unknown = input
    for (const k of path) got = isContainer(got) ? got[k] : undefined
    const shown = got === undefined ? "nothing" : (JSON.stringify(got) ?? String(got))
    if (i.message === "Missing key") return `${where}: missing`
    // A check's own message already quotes the value.
    return i.message.includes(shown) ? `${where}: ${i.message}` : `${where}: ${i.message}, got ${shown}`
  })

/** A known-keys lookup over a table keyed like `hooks.PreToolUse[].hooks[]` or `profiles.*`. */
export const knownKeysIn =
  (table: Readonly<Record<string, ReadonlyArray<string>>>): KnownKeysAt =>
  (parent) => {
    const exact = parent.map((k, i) => (typeof k === "number" ? "[]" : i === 0 ? String(k) : `.${String(k)}`)).join("")
    if (table[exact] !== undefined) return table[exact]
    // A named entry (a profile, a server) is looked up as `*`.
    const named = parent
      .map((k, i) =>
        typeof k === "number" ? "[]" : i === 0 ? String(k) : i === parent.length - 1 ? ".*" : `.${String(k)}`
      )
      .join("")
    return table[named]
  }

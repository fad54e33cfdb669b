/**
 * "Did you mean `filePath`?" for an argument name the tool does not take. Models trained on
 * other agents send their names (`file_path`, `old_string`): the same words in another case
 * match first; otherwise the one parameter within a small edit distance.
 */
import { distance } from "fastest-levenshtein"
import type { JsonSchema } from "../schema/json-schema.ts"

const normalize = (name: string) => name.toLowerCase().replace(/[-_\s]/g, "")

/** The properties of the object at `path` (property names and array indexes) in `schema`. */
const propertiesAt = (schema: JsonSchema, path: ReadonlyArray<PropertyKey>): ReadonlyArray<string> => {
  let at: JsonSchema | undefined = schema
  for (const key of path) {
    if (at === undefined) return []
    at =
      typeof key === "number"
        ? Array.isArray(at.items)
          ? undefined
          : (at.items as JsonSchema | undefined)
        : at.properties?.[String(key)]
  }
  return Object.keys(at?.properties ?? {})
}

/** The parameter an unexpected key at `path` most likely meant, if one is close enough. */
export const intendedKey = (schema: JsonSchema, path: ReadonlyArray<PropertyKey>): string | undefined => {
  const given = path.at(-1)
  if (typeof given !== "string") return undefined
  const known = propertiesAt(schema, path.slice(0, -1))
  const wanted = normalize(given)
  const same = known.find((k) => normalize(k) === wanted)
  if (same !== undefined) return same
  const ranked = known
    .map((k) => ({ k, d: distance(wanted, normalize(k)) }))
    .filter(({ d }) => d <= Math.max(1, Math.floor(wanted.length / 4)))
    .sort((a, b) => a.d - b.d)
  return ranked.length === 1 || (ranked.length > 1 && ranked[0]!.d < ranked[1]!.d) ? ranked[0]!.k : undefined
}

/**
 * Anthropic (and OpenAI) want the top of a tool's input schema to be one plain object: no
 * oneOf/anyOf/allOf there. A union of objects becomes one object with every branch's properties,
 * requiring only what every branch requires; the validator still enforces the real union.
 */
import { isRecord } from "../json-schema.ts"
import { mergeAllOf } from "../resolve.ts"
import { Changes, type Compiled } from "./report.ts"

const UNIONS = ["oneOf", "anyOf"] as const

export const flattenTop = (schema: Record<string, unknown>, changes: Changes): Record<string, unknown> => {
  let out = { ...schema }
  if (Array.isArray(out.allOf)) {
    const { allOf, ...rest } = out
    out = mergeAllOf([rest, ...(allOf as Array<Record<string, unknown>>)]) as Record<string, unknown>
    changes.rewrote("", "allOf", "merged into the top-level object")
  }
  for (const union of UNIONS) {
    const branches = out[union]
    if (!Array.isArray(branches)) continue
    const objects = branches.filter(isRecord)
    const properties: Record<string, unknown> = { ...(isRecord(out.properties) ? out.properties : {}) }
    for (const branch of objects) {
      for (const [name, sub] of Object.entries(isRecord(branch.properties) ? branch.properties : {})) {
        const existing = properties[name]
        properties[name] =
          existing === undefined || JSON.stringify(existing) === JSON.stringify(sub) ? sub : { anyOf: [existing, sub] }
      }
    }
    const requiredBy = (b: Record<string, unknown>) => (Array.isArray(b.required) ? (b.required as Array<string>) : [])
    const common =
      objects.length === 0 ? [] : requiredBy(objects[0]!).filter((n) => objects.every((b) => requiredBy(b).includes(n)))
    const required = [...new Set([...(Array.isArray(out.required) ? (out.required as Array<string>) : []), ...common])]
    const { [union]: _, ...rest } = out
    out = { ...rest, properties, ...(required.length > 0 ? { required } : {}) }
    changes.rewrote(
      "",
      union,
      `${objects.length} alternatives merged into one object; required only: ${required.join(", ") || "(none)"}`
    )
  }
  if (out.type !== "object") {
    if (out.type !== undefined) changes.rewrote("", "type", `was ${JSON.stringify(out.type)}, set to "object"`)
    const { type: _, ...rest } = out
    out = { type: "object", ...rest }
  }
  return out
}

/** Only the top-level fix, for providers that take JSON Schema as is below it (OpenAI, non-strict). */
export const compileTopObject = (schema: Record<string, unknown>): Compiled => {
  const changes = new Changes()
  return { schema: flattenTop(schema, changes), changes: changes.list }
}

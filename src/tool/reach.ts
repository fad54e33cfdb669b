/**
 * Tools described for one caller: a tool whose description depends on what its caller can reach
 * (`Tool.describeIn`) gets a copy described for `reach`; every other tool is itself. A caller
 * narrowed by a profile is then told only of tools it can use.
 */
import type { Tool } from "./tool.ts"

export const describedFor = (tools: ReadonlyArray<Tool>, reach: ReadonlyArray<Tool>): ReadonlyArray<Tool> =>
  tools.some((t) => t.describeIn !== undefined)
    ? tools.map((t) => (t.describeIn === undefined ? t : { ...t, description: t.describeIn(reach) }))
    : tools

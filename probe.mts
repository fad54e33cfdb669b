import { Effect } from "effect"
import { analyzeCommand, readOnlyConcern } from "./src/permission/shell.ts"
import { bashParser } from "./src/permission/shell.ts"
for (const c of JSON.parse(process.argv[2]!)) {
  const a = await Effect.runPromise(analyzeCommand(c))
  const p = await Effect.runPromise(bashParser)
  console.log(JSON.stringify(c), p.parse(c)!.rootNode.toString(), "\n   cmds:", JSON.stringify(a.commands), "\n   concerns:", a.concerns.join(" | "), "\n   opaque:", a.opaque.join(" | "), "\n   ro:", a.commands.map(c => readOnlyConcern(c, () => true)))
}

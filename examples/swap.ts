/**
 * Swapping pieces of the tool system: a project that lives in memory, an approval that answers
 * in your own UI (here it records the question and says yes), and an output store that sees
 * every output. Each is provided to ToolSystem.layer; every other service is the default, and
 * every service that uses one of these gets yours. Every file tool runs on the given
 * FileSystem: read, ls, glob and grep read it, write, edit and apply_patch change it, and
 * nothing is written to the disk.
 *   node examples/swap.ts
 */
import { Effect, FileSystem, Layer } from "effect"
import {
  Approval,
  Dispatcher,
  MemoryFileSystem,
  OutputConfig,
  OutputStore,
  type ToolCall,
  ToolSystem
} from "../src/index.ts"

const root = "/project"
const files = {
  "/project/README.md": "# demo\n",
  "/project/src/a.ts": "export const a = 1\n",
  "/project/.env": "TOKEN=demo\n",
  "/project/node_modules/dep/index.js": "module.exports = 1\n"
}

// Your UI: here, a list of what was asked, and yes once.
const asked: Array<string> = []
const approval = Layer.succeed(
  Approval,
  Approval.of({
    ask: (q) =>
      Effect.sync(() => {
        asked.push(`${q.tool}: ${q.reason}`)
        return { answer: "once" }
      })
  })
)

// A store that wraps the in-memory one and sees every put.
const puts: Array<string> = []
const store = Layer.effect(
  OutputStore,
  Effect.map(OutputStore, (inner) =>
    OutputStore.of({
      ...inner,
      put: (request) => {
        puts.push(`${request.tool}:${request.id}`)
        return inner.put(request)
      }
    })
  )
).pipe(Layer.provide(OutputStore.layerMemory), Layer.provide(OutputConfig.layerWith({})))

const turns: ReadonlyArray<ReadonlyArray<ToolCall>> = [
  [
    { id: "c1", name: "read", args: { filePath: "src/a.ts" } },
    { id: "c2", name: "ls", args: {} },
    { id: "c3", name: "glob", args: { pattern: "**/*.ts" } },
    { id: "c4", name: "grep", args: { pattern: "const a" } }
  ],
  // Reading a .env-like file asks by default: the approval above answers.
  [
    { id: "c5", name: "read", args: { filePath: ".env" } },
    { id: "c6", name: "glob", args: { pattern: "src/*.ts" } }
  ],
  // Changes land in the FileSystem given: each asks (the approval above answers).
  [
    { id: "c7", name: "edit", args: { filePath: "src/a.ts", oldString: "a = 1", newString: "a = 2" } },
    { id: "c8", name: "write", args: { filePath: "src/b.ts", content: "export const b = 1\n" } }
  ],
  [
    {
      id: "c9",
      name: "apply_patch",
      args: {
        patchText: [
          "*** Begin Patch",
          "*** Update File: src/b.ts",
          "@@",
          "-export const b = 1",
          "+export const b = 3",
          "*** Add File: src/c.ts",
          '+export { a } from "./a.ts"',
          "*** End Patch"
        ].join("\n")
      }
    }
  ],
  [{ id: "c10", name: "grep", args: { pattern: "export" } }]
]

const program = Effect.gen(function* () {
  const dispatcher = yield* Dispatcher
  const results = []
  for (const calls of turns) results.push(...(yield* dispatcher.dispatchBatch(calls, { sessionId: "swap" })))
  // What the project holds now, read back from the FileSystem given.
  const fs = yield* FileSystem.FileSystem
  const project: Record<string, string> = {}
  for (const name of ["a.ts", "b.ts", "c.ts"]) project[`src/${name}`] = yield* fs.readFileString(`${root}/src/${name}`)
  return { results, project }
})

const system = ToolSystem.layer({ root }).pipe(
  Layer.provide(Layer.mergeAll(MemoryFileSystem.layer(files), approval, store))
)
const { results, project } = await Effect.runPromise(program.pipe(Effect.provide(system)))
for (const r of results) {
  console.log(
    JSON.stringify({ id: r.id, tool: r.tool, status: r.status, outputId: r.outputId, modelOutput: r.modelOutput })
  )
}
console.log(JSON.stringify({ asked, puts, project }))

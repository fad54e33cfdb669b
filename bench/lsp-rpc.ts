/**
 * The language-server client's JSON-RPC (src/lsp/rpc.ts, effects) against the library it replaced
 * (vscode-jsonrpc's MessageConnection, what src/lsp/client.ts used before), in one run, paired:
 * each against its own copy of the scripted server (test/lsp/fake-server.mjs), a hover round trip
 * with a small answer, then a 1 MB document sent (didChange) and answered back (hover).
 *   node bench/lsp-rpc.ts [runs]
 */
import { spawn } from "node:child_process"
import { mkdtempSync, rmSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { pathToFileURL } from "node:url"
import { Effect, Exit, Scope } from "effect"
import { createMessageConnection, StreamMessageReader, StreamMessageWriter } from "vscode-languageserver-protocol/node"
import { LspClient } from "../src/lsp/client.ts"
import { paired } from "./lib.ts"

const runs = Number(process.argv[2] ?? 300)
const FAKE = new URL("../test/lsp/fake-server.mjs", import.meta.url).pathname
const dir = mkdtempSync(join(tmpdir(), "freecode-bench-lsp-"))
const file = join(dir, "a.fake")
const uri = pathToFileURL(file).href
const hoverParams = { textDocument: { uri }, position: { line: 0, character: 0 } }
const args = [FAKE, "asks", join(dir, "starts.log")]

// Ours: the client as the service starts it, in a scope of its own.
const scope = Effect.runSync(Scope.make())
const ours = await Effect.runPromise(
  Scope.provide(LspClient.start("fake", { command: process.execPath, args }, dir, 30_000), scope)
)
await Effect.runPromise(ours.sync(file, "small\n", "fake"))

// Theirs: vscode-jsonrpc over the same kind of child.
const child = spawn(process.execPath, args, { stdio: ["pipe", "pipe", "inherit"] })
const theirs = createMessageConnection(new StreamMessageReader(child.stdout), new StreamMessageWriter(child.stdin))
// Answered as the old client answered them (the scripted server asks both after `initialized`).
theirs.onRequest("workspace/configuration", (params: { readonly items: ReadonlyArray<unknown> }) =>
  params.items.map(() => null)
)
theirs.onRequest("client/registerCapability", () => null)
theirs.listen()
await theirs.sendRequest("initialize", { processId: process.pid, rootUri: pathToFileURL(dir).href, capabilities: {} })
await theirs.sendNotification("initialized", {})
await theirs.sendNotification("textDocument/didOpen", {
  textDocument: { uri, languageId: "fake", version: 1, text: "small\n" }
})

const report = (
  label: string,
  [a, b]: readonly [{ medianMs: number; p90Ms: number }, { medianMs: number; p90Ms: number }]
) =>
  console.log(
    `${label}: rpc.ts median ${a.medianMs.toFixed(3)} ms (p90 ${a.p90Ms.toFixed(3)}), vscode-jsonrpc median ${b.medianMs.toFixed(3)} ms (p90 ${b.p90Ms.toFixed(3)})`
  )

report(
  "hover, small answer",
  await paired(
    runs,
    ["rpc.ts", () => Effect.runPromise(ours.request("textDocument/hover", hoverParams, 30_000))],
    ["vscode-jsonrpc", () => theirs.sendRequest("textDocument/hover", hoverParams)]
  )
)

const big = (n: number) => `${"x".repeat(1024 * 1024 - 8)}${String(n).padStart(7, "0")}\n`
let oursVersion = 0
let theirVersion = 1
report(
  "1 MB sent and answered back",
  await paired(
    Math.max(10, Math.floor(runs / 10)),
    [
      "rpc.ts",
      () =>
        Effect.runPromise(
          Effect.andThen(
            ours.sync(file, big(++oursVersion), "fake"),
            ours.request("textDocument/hover", hoverParams, 30_000)
          )
        )
    ],
    [
      "vscode-jsonrpc",
      async () => {
        theirVersion++
        await theirs.sendNotification("textDocument/didChange", {
          textDocument: { uri, version: theirVersion },
          contentChanges: [{ text: big(theirVersion) }]
        })
        return theirs.sendRequest("textDocument/hover", hoverParams)
      }
    ]
  )
)

await Effect.runPromise(Scope.close(scope, Exit.void))
theirs.dispose()
child.kill("SIGKILL")
rmSync(dir, { recursive: true, force: true })

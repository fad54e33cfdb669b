/**
 * A scripted language server for the client's protocol tests, where a real server cannot be made
 * to misbehave on cue: `node fake-server.mjs <mode> <log>`.
 *   asks   after `initialized`, asks the client for workspace/configuration and
 *          client/registerCapability; hover answers with those answers and the document's text
 *   hang   never answers hover: appends `hover` to <log>.requests when asked, `cancelled` when
 *          the client cancels it
 *   crash  exits (code 1) when asked for hover
 *   refuse answers hover with an error
 * Every start appends `start <ms> <pid>` to <log>.
 */
import { appendFileSync } from "node:fs"
import { createMessageConnection, StreamMessageReader, StreamMessageWriter } from "vscode-languageserver-protocol/node"

const [mode, log] = process.argv.slice(2)
appendFileSync(log, `start ${Date.now()} ${process.pid}\n`)

const connection = createMessageConnection(
  new StreamMessageReader(process.stdin),
  new StreamMessageWriter(process.stdout)
)
const texts = new Map()
const answers = []
let asked = Promise.resolve()

connection.onRequest("initialize", () => ({ capabilities: { hoverProvider: true, textDocumentSync: 1 } }))
connection.onNotification("initialized", () => {
  if (mode !== "asks") return
  asked = (async () => {
    answers.push(
      await connection.sendRequest("workspace/configuration", {
        items: [{ section: "fake" }, { section: "fake.lint" }]
      })
    )
    answers.push(
      await connection.sendRequest("client/registerCapability", {
        registrations: [{ id: "w", method: "workspace/didChangeWatchedFiles", registerOptions: { watchers: [] } }]
      })
    )
  })()
})
connection.onNotification("textDocument/didOpen", (p) => texts.set(p.textDocument.uri, p.textDocument.text))
connection.onNotification("textDocument/didChange", (p) => texts.set(p.textDocument.uri, p.contentChanges.at(-1).text))
connection.onRequest("textDocument/hover", async (p, token) => {
  if (mode === "crash") process.exit(1)
  if (mode === "refuse") throw new Error("no hover here")
  if (mode === "hang") {
    token.onCancellationRequested(() => appendFileSync(`${log}.requests`, "cancelled\n"))
    appendFileSync(`${log}.requests`, "hover\n")
    return new Promise(() => undefined)
  }
  await asked
  return { contents: { kind: "plaintext", value: JSON.stringify({ answers, text: texts.get(p.textDocument.uri) }) } }
})
connection.onRequest("shutdown", () => null)
connection.onNotification("exit", () => process.exit(0))
connection.listen()

/**
 * `lsp`: code intelligence from the project's language server (TypeScript's own `tsc --lsp`,
 * or pyright/gopls/rust-analyzer/clangd when on PATH). Positions are 1-based, as `read` shows
 * them; results are `path:line:col: <line>`, at most 100.
 */
import { Effect, FileSystem, Schema } from "effect"
import type {
  CallHierarchyIncomingCall,
  CallHierarchyItem,
  CallHierarchyOutgoingCall,
  DocumentSymbol,
  Hover,
  Location,
  SymbolInformation,
  WorkspaceSymbol
} from "vscode-languageserver-protocol"
import {
  formatDiagnostics,
  formatDocumentSymbols,
  formatHover,
  formatIncoming,
  formatLocations,
  formatOutgoing,
  formatWorkspaceSymbols,
  LineSource,
  sortLocations,
  toLocations
} from "../lsp/format.ts"
import { LspClients, type LspDocument } from "../lsp/service.ts"
import { displayPath, resolvePath } from "../path/path.ts"
import { plural } from "../text/plural.ts"
import { fail } from "../tool/errors.ts"
import { defineTool } from "../tool/tool.ts"
import { statOrFail } from "./failures/fs.ts"

const OPERATIONS = [
  "goToDefinition",
  "findReferences",
  "hover",
  "documentSymbol",
  "workspaceSymbol",
  "goToImplementation",
  "incomingCalls",
  "outgoingCalls",
  "diagnostics"
] as const
type Operation = (typeof OPERATIONS)[number]

const NEEDS_POSITION: ReadonlySet<Operation> = new Set([
  "goToDefinition",
  "findReferences",
  "hover",
  "goToImplementation",
  "incomingCalls",
  "outgoingCalls"
])

/** The server capability each operation needs, to say clearly when a server lacks it. */
const CAPABILITY: Readonly<Record<Operation, string>> = {
  goToDefinition: "definitionProvider",
  findReferences: "referencesProvider",
  hover: "hoverProvider",
  documentSymbol: "documentSymbolProvider",
  workspaceSymbol: "workspaceSymbolProvider",
  goToImplementation: "implementationProvider",
  incomingCalls: "callHierarchyProvider",
  outgoingCalls: "callHierarchyProvider",
  diagnostics: "diagnosticProvider"
}

const Parameters = Schema.Struct({
  operation: Schema.Literals(OPERATIONS).annotate({ description: "What to ask the language server." }),
  filePath: Schema.String.annotate({
    description: "File, absolute or relative to the project root (workspaceSymbol: any file of that language)."
  }),
  line: Schema.optionalKey(Schema.Int.annotate({ description: "1-based line, as read shows it." })),
  character: Schema.optionalKey(Schema.Int.annotate({ description: "1-based column in that line." })),
  query: Schema.optionalKey(Schema.String.annotate({ description: "Symbol name to search for (workspaceSymbol)." }))
})
type Parameters = typeof Parameters.Type

const position = (doc: LspDocument, args: Parameters) => ({
  textDocument: { uri: doc.uri },
  position: { line: args.line! - 1, character: args.character! - 1 }
})

export const LspTool = defineTool({
  id: "lsp",
  description:
    "Ask the language server about code. Operations at a position need line and character (1-based, as read " +
    "shows them); workspaceSymbol needs query; diagnostics lists the file's errors. Unlike grep, findReferences " +
    "skips comments and same-named symbols in other modules.",
  parameters: Parameters,
  concurrencySafe: true,
  retrySafe: true,
  interruptBehavior: "cancel",
  timeout: "90 seconds",
  permissions: { operations: ["file.read"] },
  paths: ({ filePath }, ctx) => [resolvePath(ctx.root, filePath)],
  validateInput: (args) =>
    Effect.gen(function* () {
      if (NEEDS_POSITION.has(args.operation)) {
        if (args.line === undefined || args.character === undefined)
          return yield* fail(
            `${args.operation} needs line and character (1-based, as read shows them) of the symbol in ${args.filePath}.`
          )
        if (args.line < 1 || args.character < 1)
          return yield* fail(`line and character are 1-based: the first line is 1, the first column is 1.`)
      }
      if (args.operation === "workspaceSymbol" && (args.query ?? "").trim() === "")
        return yield* fail("workspaceSymbol needs a query: the symbol name, or part of it.")
    }),
  execute: (args, ctx) =>
    Effect.gen(function* () {
      const lsp = yield* LspClients
      const fs = yield* FileSystem.FileSystem
      const path = resolvePath(ctx.root, args.filePath)
      const shown = displayPath(ctx.root, path)
      const info = yield* statOrFail(fs, ctx.root, path)
      if (info.type !== "File") return yield* fail(`${shown} is not a file; give a source file (find one with glob).`)
      const doc = yield* lsp.open(path, ctx.root)
      const capability = CAPABILITY[args.operation]
      if (args.operation !== "diagnostics" && !(doc.client.capabilities as Record<string, unknown>)[capability])
        return yield* fail(
          `The ${doc.server} language server does not support ${args.operation} (no ${capability}). ` +
            "Use grep or read instead."
        )
      if (NEEDS_POSITION.has(args.operation)) {
        const lines = doc.text.split(/\r?\n/)
        if (args.line! > lines.length)
          return yield* fail(`${shown} has ${plural(lines.length, "line")}; line ${args.line} does not exist.`)
      }
      const src = new LineSource(ctx.root, new Map([[doc.uri, doc.text]]))
      const title = `lsp ${args.operation} ${shown}${args.line === undefined ? "" : `:${args.line}:${args.character}`}`
      const output = yield* run(args, doc, src)
      return { title, output, metadata: { server: doc.server, operation: args.operation } }
    })
})

/** Locations shown with their lines, each file read through LocalFs first. */
const locations = (src: LineSource, found: ReadonlyArray<Location>, noun: string) =>
  Effect.map(src.load(sortLocations(found).map((l) => l.uri)), () => formatLocations(src, found, noun))

const run = Effect.fnUntraced(function* (args: Parameters, doc: LspDocument, src: LineSource) {
  const lsp = yield* LspClients
  switch (args.operation) {
    case "goToDefinition":
      return yield* locations(
        src,
        toLocations(yield* lsp.request(doc, "textDocument/definition", position(doc, args))),
        "definitions"
      )
    case "goToImplementation":
      return yield* locations(
        src,
        toLocations(yield* lsp.request(doc, "textDocument/implementation", position(doc, args))),
        "implementations"
      )
    case "findReferences":
      return yield* locations(
        src,
        toLocations(
          yield* lsp.request(doc, "textDocument/references", {
            ...position(doc, args),
            context: { includeDeclaration: false }
          })
        ),
        "references"
      )
    case "hover":
      return formatHover(yield* lsp.request<Hover | null>(doc, "textDocument/hover", position(doc, args)))
    case "documentSymbol":
      return formatDocumentSymbols(
        src,
        doc.uri,
        yield* lsp.request<ReadonlyArray<DocumentSymbol | SymbolInformation> | null>(
          doc,
          "textDocument/documentSymbol",
          { textDocument: { uri: doc.uri } }
        )
      )
    case "workspaceSymbol":
      return formatWorkspaceSymbols(
        src,
        yield* lsp.request<ReadonlyArray<SymbolInformation | WorkspaceSymbol> | null>(doc, "workspace/symbol", {
          query: args.query
        })
      )
    case "incomingCalls":
    case "outgoingCalls": {
      const items = yield* lsp.request<ReadonlyArray<CallHierarchyItem> | null>(
        doc,
        "textDocument/prepareCallHierarchy",
        position(doc, args)
      )
      const item = items?.[0]
      if (item === undefined) return "No function or method at this position; point at a function's name."
      if (args.operation === "incomingCalls") {
        const calls = yield* lsp.request<ReadonlyArray<CallHierarchyIncomingCall> | null>(
          doc,
          "callHierarchy/incomingCalls",
          { item }
        )
        yield* src.load((calls ?? []).map((c) => c.from.uri))
        return formatIncoming(src, calls)
      }
      return formatOutgoing(
        src,
        item.uri,
        yield* lsp.request<ReadonlyArray<CallHierarchyOutgoingCall> | null>(doc, "callHierarchy/outgoingCalls", {
          item
        })
      )
    }
    case "diagnostics":
      return formatDiagnostics(src, doc.uri, yield* lsp.diagnostics(doc))
  }
})

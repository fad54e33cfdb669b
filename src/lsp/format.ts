/**
 * LSP results as compact text for a model: `path:line:col: <the line>` with 1-based positions
 * (as `read` numbers them), paths relative to the project root, a cap on how many are shown.
 */
import { fileURLToPath } from "node:url"
import { Effect } from "effect"
import type {
  CallHierarchyIncomingCall,
  CallHierarchyItem,
  CallHierarchyOutgoingCall,
  Diagnostic,
  DocumentSymbol,
  Hover,
  Location,
  LocationLink,
  MarkedString,
  MarkupContent,
  SymbolInformation,
  WorkspaceSymbol
} from "vscode-languageserver-protocol"
import { LocalFs } from "../fs/local-fs.ts"
import { displayPath } from "../path/path.ts"

export const MAX_RESULTS = 100

// biome-ignore format: a word list indexed by SymbolKind
const KINDS = ["", "file", "module", "namespace", "package", "class", "method", "property", "field", "constructor",
  "enum", "interface", "function", "variable", "constant", "string", "number", "boolean", "array", "object", "key",
  "null", "enum member", "struct", "event", "operator", "type parameter"]

const SEVERITY = ["", "error", "warning", "info", "hint"]

export const kindName = (kind: number): string => KINDS[kind] ?? "symbol"

const utf8 = new TextDecoder()

/**
 * Each file's lines, read once per formatting pass through LocalFs (the tools' file system):
 * `load` the files a result names, then format it from what was read.
 */
export class LineSource {
  private readonly root: string
  private readonly cache = new Map<string, ReadonlyArray<string>>()
  constructor(root: string, open: ReadonlyMap<string, string> = new Map()) {
    this.root = root
    for (const [uri, text] of open) this.cache.set(uri, text.split(/\r?\n/))
  }

  /**
   * Reads the files of `uris` not held yet, in the order shown: the first MAX_RESULTS (no more
   * lines are shown). One that cannot be read has no lines.
   */
  load(uris: Iterable<string>): Effect.Effect<void, never, LocalFs> {
    const wanted = [...new Set(uris)].filter((uri) => !this.cache.has(uri)).slice(0, MAX_RESULTS)
    if (wanted.length === 0) return Effect.void
    return Effect.flatMap(Effect.service(LocalFs), (fs) =>
      Effect.forEach(
        wanted,
        (uri) => {
          if (!uri.startsWith("file:")) return Effect.sync(() => this.cache.set(uri, []))
          return fs.readFile(fileURLToPath(uri)).pipe(
            Effect.map((bytes) => utf8.decode(bytes).split(/\r?\n/)),
            Effect.orElseSucceed((): ReadonlyArray<string> => []),
            Effect.map((lines) => this.cache.set(uri, lines))
          )
        },
        { discard: true }
      )
    )
  }

  /** A line of a file held (its own text, or one `load` read); empty when it is not held. */
  lineOf(uri: string, line: number): string {
    return (this.cache.get(uri)?.[line] ?? "").trim()
  }

  path(uri: string): string {
    return uri.startsWith("file:") ? displayPath(this.root, fileURLToPath(uri)) : uri
  }

  /** `path:line:col: text` for a zero-based position. */
  at(uri: string, line: number, character: number, text = this.lineOf(uri, line)): string {
    return `${this.path(uri)}:${line + 1}:${character + 1}: ${text}`
  }
}

/** Location, Location[], LocationLink[] or null, as one list. */
export const toLocations = (result: unknown): ReadonlyArray<Location> => {
  if (result === null || result === undefined) return []
  const list = Array.isArray(result) ? result : [result]
  return list.map((l: Location | LocationLink) =>
    "targetUri" in l ? { uri: l.targetUri, range: l.targetSelectionRange } : l
  )
}

/** Locations in the order they are shown. */
export const sortLocations = (xs: ReadonlyArray<Location>): Array<Location> =>
  [...xs].sort(
    (a, b) =>
      a.uri.localeCompare(b.uri) ||
      a.range.start.line - b.range.start.line ||
      a.range.start.character - b.range.start.character
  )

/** Lines after the first MAX_RESULTS are replaced by a count. */
export const capped = (lines: ReadonlyArray<string>, noun: string): string => {
  if (lines.length <= MAX_RESULTS) return lines.join("\n")
  return [
    ...lines.slice(0, MAX_RESULTS),
    `(Showing ${MAX_RESULTS} of ${lines.length} ${noun}; narrow the query or ask about a more specific symbol.)`
  ].join("\n")
}

export const formatLocations = (src: LineSource, locations: ReadonlyArray<Location>, noun: string): string =>
  locations.length === 0
    ? `No ${noun} found.`
    : capped(
        sortLocations(locations).map((l) => src.at(l.uri, l.range.start.line, l.range.start.character)),
        noun
      )

const markupText = (c: MarkupContent | MarkedString | ReadonlyArray<MarkedString>): string => {
  if (typeof c === "string") return c
  if (Array.isArray(c)) return c.map(markupText).join("\n\n")
  if ("kind" in c) return c.value
  return "language" in c ? `\`\`\`${c.language}\n${c.value}\n\`\`\`` : ""
}

export const formatHover = (hover: Hover | null): string => {
  const text = hover === null ? "" : markupText(hover.contents).trim()
  return text === "" ? "No hover information at this position." : text
}

export const formatDocumentSymbols = (
  src: LineSource,
  uri: string,
  symbols: ReadonlyArray<DocumentSymbol | SymbolInformation> | null
): string => {
  if (symbols === null || symbols.length === 0) return "No symbols in this file."
  const lines: Array<string> = []
  const walk = (s: DocumentSymbol, depth: number) => {
    const p = s.selectionRange.start
    lines.push(`${"  ".repeat(depth)}${p.line + 1}:${p.character + 1} ${kindName(s.kind)} ${s.name}`)
    for (const c of s.children ?? []) walk(c, depth + 1)
  }
  for (const s of symbols) {
    if ("location" in s) {
      const p = s.location.range.start
      lines.push(`${p.line + 1}:${p.character + 1} ${kindName(s.kind)} ${s.name}`)
    } else walk(s, 0)
  }
  return `${src.path(uri)}\n${capped(lines, "symbols")}`
}

export const formatWorkspaceSymbols = (
  src: LineSource,
  symbols: ReadonlyArray<SymbolInformation | WorkspaceSymbol> | null
): string => {
  if (symbols === null || symbols.length === 0) return "No matching symbols."
  const lines = symbols.map((s) => {
    const loc = s.location
    const where =
      "range" in loc
        ? `${src.path(loc.uri)}:${loc.range.start.line + 1}:${loc.range.start.character + 1}`
        : src.path(loc.uri)
    return `${where}: ${kindName(s.kind)} ${s.name}${s.containerName ? ` (in ${s.containerName})` : ""}`
  })
  return capped(lines, "symbols")
}

const itemLine = (src: LineSource, item: CallHierarchyItem): string =>
  `${src.path(item.uri)}:${item.selectionRange.start.line + 1}:${item.selectionRange.start.character + 1}: ${kindName(item.kind)} ${item.name}`

export const formatIncoming = (src: LineSource, calls: ReadonlyArray<CallHierarchyIncomingCall> | null): string => {
  if (calls === null || calls.length === 0) return "No callers found."
  const lines = calls.flatMap((c) => [
    itemLine(src, c.from),
    ...c.fromRanges.map((r) => `  ${src.at(c.from.uri, r.start.line, r.start.character)}`)
  ])
  return capped(lines, "lines")
}

export const formatOutgoing = (
  src: LineSource,
  callerUri: string,
  calls: ReadonlyArray<CallHierarchyOutgoingCall> | null
): string => {
  if (calls === null || calls.length === 0) return "No calls found."
  const lines = calls.flatMap((c) => [
    itemLine(src, c.to),
    ...c.fromRanges.map((r) => `  ${src.at(callerUri, r.start.line, r.start.character)}`)
  ])
  return capped(lines, "lines")
}

/** TypeScript's codes as people write them (TS2345); other servers' as `source code`. */
const diagnosticCode = (d: Diagnostic): string => {
  const source = d.source ?? ""
  if (/^(ts|typescript)$/i.test(source) && typeof d.code === "number") return `TS${d.code}`
  return source === "" ? String(d.code) : `${source} ${d.code}`
}

export const formatDiagnostics = (src: LineSource, uri: string, diagnostics: ReadonlyArray<Diagnostic>): string => {
  if (diagnostics.length === 0) return `${src.path(uri)}: no problems.`
  const sorted = [...diagnostics].sort(
    (a, b) => (a.severity ?? 1) - (b.severity ?? 1) || a.range.start.line - b.range.start.line
  )
  return capped(
    sorted.map((d) => {
      const code = d.code === undefined ? "" : ` ${diagnosticCode(d)}`
      return `${src.path(uri)}:${d.range.start.line + 1}:${d.range.start.character + 1}: ${SEVERITY[d.severity ?? 1]}${code}: ${(typeof d.message === "string" ? d.message : d.message.value).split("\n").join(" ")}`
    }),
    "diagnostics"
  )
}

/**
 * The ripgrep backend: the rg binary of @vscode/ripgrep, run with node:child_process (see runRg).
 *
 * Flags that make rg behave the same everywhere (inside or outside a git repository, on any
 * machine) and the same as the walk backend:
 * - `--no-config`: no RIPGREP_CONFIG_PATH.
 * - `--no-require-git`: .gitignore files apply even outside a git repository.
 * - `--no-ignore-global --no-ignore-exclude --no-ignore-dot`: only .gitignore files count.
 * - `--no-ignore-parent` plus `--ignore-file`: rg would read every ancestor's .gitignore up to
 *   `/`; instead the ancestors from the project root down to the searched directory are
 *   rewritten into one ignore file anchored at the root (rg's working directory).
 * - `--hidden --glob !.git`: hidden files are searched, `.git` never.
 * - A first `--ignore-file` skips the dependency/build folders of default-skip.ts.
 * - The path is always given (rg reads stdin without one) and stdin is closed.
 * File-name filters are never passed as `--glob`: rg's globs override .gitignore. grep's
 * `include` becomes a file type (`--type-add`), which is applied after .gitignore.
 */
import { spawn } from "node:child_process"
import * as NFS from "node:fs"
import * as NodeOs from "node:os"
import * as NodePath from "node:path"
import { StringDecoder } from "node:string_decoder"
import { Effect, FileSystem } from "effect"
import { LocalFs } from "../../fs/local-fs.ts"
import { basenameOf, relativeInside, resolvePath } from "../../path/path.ts"
import { readableError } from "../../tool/readable-error.ts"
import {
  type FileList,
  type GrepRequest,
  InvalidPattern,
  type ListFilesRequest,
  MatchCollector,
  matchText,
  RipgrepUnavailable,
  type SearchBackend,
  SearchFailed
} from "./backend.ts"
import { ContextTracker } from "./context.ts"
import { DEFAULT_SKIP_IGNORE_FILE } from "./default-skip.ts"
import { FILE_TYPES, fileTypeMatcher } from "./file-types.ts"
import { ancestorChain, anchoredIgnoreFile } from "./ignore.ts"
import { walkTree } from "./walk.ts"

/** Flags every rg call gets. */
export const RG_BASE_FLAGS: ReadonlyArray<string> = [
  "--no-config",
  "--no-require-git",
  "--no-ignore-parent",
  "--no-ignore-global",
  "--no-ignore-exclude",
  "--no-ignore-dot",
  "--hidden",
  "--glob",
  "!.git",
  "--color",
  "never"
]

/**
 * The path of the rg binary shipped in @vscode/ripgrep. The package throws on import when the
 * platform package is missing, so it is imported dynamically and the failure becomes typed.
 */
export const loadRipgrepPath: Effect.Effect<string, RipgrepUnavailable> = Effect.tryPromise({
  try: async () => (await import("@vscode/ripgrep")).rgPath,
  catch: (e) => new RipgrepUnavailable({ message: `@vscode/ripgrep is not usable: ${String(e)}` })
})

interface RgRun {
  readonly exitCode: number
  readonly stderr: string
}

/** stderr kept for notes and errors: rg's complaints are a few lines. */
const STDERR_KEEP = 64 * 1024

/**
 * Runs rg to completion, feeding stdout text to `onStdout` as it arrives. It runs on
 * node:child_process directly, not effect's ChildProcessSpawner: that one pipes stdout through
 * a PassThrough into a pulled stream, which cost glob ~3–7 ms per call on a 25,000-file tree
 * (docs/benchmarks.md). Interrupting the effect kills rg.
 */
const runRg = (
  rgPath: string,
  cwd: string,
  args: ReadonlyArray<string>,
  onStdout: (chunk: string) => void
): Effect.Effect<RgRun, RipgrepUnavailable | SearchFailed, FileSystem.FileSystem> =>
  Effect.callback<RgRun, { readonly spawnError: Error }>((resume) => {
    const child = spawn(rgPath, args, { cwd, stdio: ["ignore", "pipe", "pipe"] })
    const decoder = new StringDecoder("utf8")
    let stderr = ""
    let failed = false
    const deliver = (text: string) => {
      if (failed || text === "") return
      try {
        onStdout(text)
      } catch (e) {
        // A bug in the consumer: stop rg and report it as one.
        failed = true
        child.kill("SIGKILL")
        resume(Effect.die(e))
      }
    }
    child.stdout.on("data", (chunk: Buffer) => deliver(decoder.write(chunk)))
    child.stderr.on("data", (chunk: Buffer) => {
      if (stderr.length < STDERR_KEEP) stderr += chunk.toString("utf8")
    })
    child.once("error", (e) => {
      failed = true
      resume(Effect.fail({ spawnError: e }))
    })
    child.once("close", (code, signal) => {
      if (failed) return
      deliver(decoder.end())
      resume(Effect.succeed({ exitCode: code ?? (signal === null ? 0 : 2), stderr }))
    })
    return Effect.sync(() => {
      if (child.exitCode === null && child.signalCode === null) child.kill("SIGKILL")
    })
  }).pipe(
    // A missing working directory also fails the spawn: that must not retire rg for good.
    Effect.catch(({ spawnError }) =>
      Effect.flatMap(FileSystem.FileSystem, (fs) =>
        Effect.flatMap(
          Effect.option(fs.stat(cwd)),
          (dir): Effect.Effect<never, RipgrepUnavailable | SearchFailed> =>
            dir._tag === "Some" && dir.value.type === "Directory"
              ? Effect.fail(new RipgrepUnavailable({ message: `cannot run rg: ${spawnError.message}` }))
              : Effect.fail(new SearchFailed({ message: `the project root ${cwd} is not a readable directory` }))
        )
      )
    )
  )

/**
 * How rg is pointed at `target`: from the root, with a relative path when the target is inside
 * it (rg prints paths relative to that), and with the ancestors' rules as an ignore file.
 */
const targetArgs = (request: { readonly root: string; readonly target: string; readonly isDir: boolean }) =>
  Effect.gen(function* () {
    const fs = yield* FileSystem.FileSystem
    const localFs = yield* LocalFs
    const rel = relativeInside(request.root, request.target)
    const pathArg = rel === undefined ? request.target : rel === "" ? "." : rel
    if (!request.isDir || rel === undefined || rel === "") return [pathArg] as const
    const chain = yield* ancestorChain(localFs, request.root, request.target)
    const text = anchoredIgnoreFile(request.root, chain)
    if (text === "") return [pathArg] as const
    const file = yield* fs.makeTempFileScoped({ prefix: "freecode-rg-", suffix: ".ignore" })
    yield* fs.writeFileString(file, text)
    return ["--ignore-file", file, pathArg] as const
  }).pipe(Effect.mapError((e) => new SearchFailed({ message: `cannot prepare the search: ${readableError(e)}` })))

/**
 * The default-skip folders as rg's first ignore file: rules in an ignore file given on the
 * command line rank below every .gitignore, so a project's own rule (ignoring one, or
 * re-including it with `!`) still decides. One file per user and per content, in a directory
 * only that user can write (checked: ours, mode 0700, not a link), shared by every process:
 * nothing is left behind per process, even by one that is killed.
 */
const makeSkipFile = (): (() => string | undefined) => {
  let file: string | undefined
  const uid = typeof process.getuid === "function" ? process.getuid() : undefined
  const dir = NodePath.join(NodeOs.tmpdir(), `freecode-rg-${uid ?? "user"}`)
  const name = `default-skip-${DEFAULT_SKIP_IGNORE_FILE.length}-${hashOf(DEFAULT_SKIP_IGNORE_FILE)}.ignore`
  return () => {
    if (file !== undefined && NFS.existsSync(file)) return file
    try {
      NFS.mkdirSync(dir, { mode: 0o700, recursive: true })
      const st = NFS.lstatSync(dir)
      if (!st.isDirectory() || (st.mode & 0o077) !== 0 || (uid !== undefined && st.uid !== uid)) return undefined
      const path = NodePath.join(dir, name)
      if (!NFS.existsSync(path) || NFS.readFileSync(path, "utf8") !== DEFAULT_SKIP_IGNORE_FILE) {
        const temp = `${path}.${process.pid}.tmp`
        NFS.writeFileSync(temp, DEFAULT_SKIP_IGNORE_FILE, { mode: 0o600 })
        NFS.renameSync(temp, path)
      }
      file = path
      return file
    } catch {
      // No usable temp directory: rg searches those folders, as before this rule existed.
      return undefined
    }
  }
}

/** A short stable hash of a text (FNV-1a), to name a file by its content. */
const hashOf = (text: string): string => {
  let h = 0x811c9dc5
  for (let i = 0; i < text.length; i++) h = Math.imul(h ^ text.charCodeAt(i), 0x01000193) >>> 0
  return h.toString(36)
}

/**
 * The default-skip folders directly in `dir`: rg skips them without saying so, and finding the
 * deeper ones would cost a walk of the tree rg was run to spare.
 */
const skippedAtTop = (
  root: string,
  dir: string,
  skipping: boolean
): Effect.Effect<ReadonlyArray<string>, never, LocalFs> =>
  !skipping
    ? Effect.succeed([])
    : walkTree({ root, dir, maxDepth: 0 }).pipe(
        Effect.map((walked) => walked.skipped),
        Effect.orElseSucceed((): ReadonlyArray<string> => [])
      )

/** First lines of rg's stderr, for notes and errors. */
const firstLines = (stderr: string, n: number): string =>
  stderr
    .split("\n")
    .map((l) => l.trimEnd())
    .filter((l) => l.length > 0)
    .slice(0, n)
    .join("\n")

const partialNote = (stderr: string): Array<string> =>
  stderr.trim() === "" ? [] : [`Some files or directories could not be read and were skipped: ${firstLines(stderr, 1)}`]

/** Builds the backend around one rg binary. */
export const makeRipgrepBackend = (rgPath: string): SearchBackend => {
  const skipFile = makeSkipFile()
  const skipArgs = (): ReadonlyArray<string> => {
    const file = skipFile()
    return file === undefined ? [] : ["--ignore-file", file]
  }
  const listFiles = (request: ListFilesRequest) =>
    Effect.gen(function* () {
      const cwd = request.root
      const [ignoreArgs, pathArg] = splitTarget(yield* targetArgs({ root: cwd, target: request.dir, isDir: true }))
      const skip = skipArgs()
      const files: Array<string> = []
      let pending = ""
      // A type filter, unlike -g, applies after the ignore rules: ignored files stay out.
      const nameFilter =
        request.nameGlob === undefined ? [] : ["--type-add", `name:${request.nameGlob}`, "--type", "name"]
      // rg prints clean relative paths ("./src/a.ts" or "src/a.ts"): joining is enough, no resolve.
      const prefix = cwd.endsWith("/") ? cwd : `${cwd}/`
      const absolute = (p: string) => (p.startsWith("/") ? p : `${prefix}${p.startsWith("./") ? p.slice(2) : p}`)
      const run = yield* runRg(
        rgPath,
        cwd,
        ["--files", "--null", ...RG_BASE_FLAGS, ...nameFilter, ...skip, ...ignoreArgs, "--", pathArg],
        (chunk) => {
          const parts = (pending + chunk).split("\0")
          pending = parts.pop() ?? ""
          for (const p of parts) if (p !== "") files.push(absolute(p))
        }
      )
      if (pending !== "") files.push(absolute(pending))
      if (run.exitCode === 2 && files.length === 0) {
        return yield* new SearchFailed({ message: `rg failed: ${firstLines(run.stderr, 5)}` })
      }
      const result: FileList = {
        files,
        notes: run.exitCode === 2 ? partialNote(run.stderr) : [],
        skipped: yield* skippedAtTop(cwd, request.dir, skip.length > 0),
        backend: "ripgrep"
      }
      return result
    }).pipe(Effect.scoped)

  /**
   * grep over `given` files (rg searches paths named on its command line whatever the ignore
   * rules, types and globs say: the caller filtered them), or over the request's path.
   */
  const grepIn = (request: GrepRequest, given: ReadonlyArray<string> | undefined) =>
    Effect.gen(function* () {
      const cwd = request.root
      const explicit = given !== undefined
      const [ignoreArgs, pathArg] = explicit
        ? [[], "."]
        : splitTarget(yield* targetArgs({ root: cwd, target: request.path, isDir: !request.isFile }))
      const skip = explicit ? [] : skipArgs()
      const filtered = explicit || request.isFile
      const include =
        request.include === undefined || filtered
          ? []
          : ["--type-add", `include:${request.include}`, "--type", "include"]
      // rg ORs its type filters: with both, the type is checked here on each result's name.
      const typeArgs =
        request.type === undefined || filtered || request.include !== undefined
          ? []
          : [...(FILE_TYPES[request.type] ?? []).flatMap((g) => ["--type-add", `ftype:${g}`]), "--type", "ftype"]
      const ofType =
        request.type !== undefined && !filtered && request.include !== undefined
          ? fileTypeMatcher(request.type)
          : undefined
      // Named as a walk from the root names them ("./src/a.ts"), so rg's messages read the same.
      const prefix = cwd.endsWith("/") ? cwd : `${cwd}/`
      const paths = explicit ? given.map((f) => (f.startsWith(prefix) ? `./${f.slice(prefix.length)}` : f)) : [pathArg]
      const collector = new MatchCollector(request.limit, request.offset ?? 0)
      const context = new ContextTracker(request.before ?? 0, request.after ?? 0)
      let pending = ""
      const onLine = (line: string) => {
        const nul = line.indexOf("\0")
        if (nul < 0) return // "--" between context groups, "binary file matches" notices
        // `N:text` for a matching line, `N-text` for a context line.
        let digits = nul + 1
        while (digits < line.length && line.charCodeAt(digits) >= 48 && line.charCodeAt(digits) <= 57) digits++
        const sep = line[digits]
        if (digits === nul + 1 || (sep !== ":" && sep !== "-")) return
        const path = resolvePath(cwd, line.slice(0, nul))
        if (ofType !== undefined && !ofType(basenameOf(path))) return
        const lineNo = Number.parseInt(line.slice(nul + 1, digits), 10)
        const text = matchText(line.slice(digits + 1))
        if (sep === "-") context.context(path, lineNo, text)
        else collector.add(context.match(path, lineNo, text))
      }
      const contextArgs = [
        ...(request.before ? ["--before-context", String(request.before)] : []),
        ...(request.after ? ["--after-context", String(request.after)] : [])
      ]
      const args = [
        "--null",
        "--line-number",
        "--with-filename",
        "--no-heading",
        // The default engine, or PCRE2 when the pattern needs it (look-around, backreferences):
        // closer to the JS RegExp of the walk backend.
        "--engine",
        "auto",
        ...(request.caseInsensitive ? ["--ignore-case"] : []),
        ...(request.multiline ? ["--multiline", "--multiline-dotall"] : []),
        ...contextArgs,
        ...RG_BASE_FLAGS,
        ...include,
        ...typeArgs,
        ...skip,
        ...ignoreArgs,
        "--regexp",
        request.pattern,
        "--",
        ...paths
      ]
      const run = yield* runRg(rgPath, cwd, args, (chunk) => {
        const lines = (pending + chunk).split("\n")
        pending = lines.pop() ?? ""
        for (const l of lines) onLine(l)
      })
      if (pending !== "") onLine(pending)
      if (run.exitCode === 2 && collector.total === 0) {
        const message = firstLines(run.stderr, 12)
        if (/regex/i.test(message) && !/error parsing glob/i.test(message)) {
          return yield* new InvalidPattern({ message })
        }
        return yield* new SearchFailed({ message: `rg failed: ${message}` })
      }
      const skipped = request.isFile || explicit ? [] : yield* skippedAtTop(cwd, request.path, skip.length > 0)
      return collector.result("ripgrep", run.exitCode === 2 ? partialNote(run.stderr) : [], skipped)
    }).pipe(Effect.scoped)

  return {
    name: "ripgrep",
    listFiles,
    grep: (request) => grepIn(request, undefined),
    grepFiles: (request, files) =>
      files.length === 0
        ? Effect.succeed(new MatchCollector(request.limit, request.offset ?? 0).result("ripgrep", [], []))
        : grepIn(request, files)
  }
}

const splitTarget = (args: ReadonlyArray<string>): [ReadonlyArray<string>, string] => [
  args.slice(0, -1),
  args[args.length - 1] ?? "."
]

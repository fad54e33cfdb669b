/**
 * An in-memory `FileSystem`: files, directories and symbolic links in a map, for tests and for
 * embedders that keep a project somewhere other than a disk. Given to the tool system
 * (`ToolSystem.layer({ root }).pipe(Layer.provide(MemoryFileSystem.layer(files)))`), it serves
 * every file tool: read, ls, glob, grep (the TypeScript search; rg needs a disk), write, edit
 * and apply_patch (LocalFs's and WriteFs's platform layers).
 *
 * Paths are POSIX and absolute. Enough of FileSystem for the tools; what it leaves out (watch,
 * hard links, copies) fails with a BadArgument naming the method. Temporary files and
 * directories are made in memory too (under /tmp), so the output store can spill into it.
 */
import * as NodePath from "node:path"
import { ByteSize, Effect, FileSystem, Layer, Option, PlatformError, Stream } from "effect"

type Node =
  | { readonly kind: "file"; bytes: Uint8Array; mtime: Date; mode: number }
  | { readonly kind: "dir"; mtime: Date; mode: number }
  | { readonly kind: "link"; readonly target: string; mtime: Date }

const failure = (tag: PlatformError.SystemErrorTag, method: string, path: string, description: string) =>
  PlatformError.systemError({ _tag: tag, module: "FileSystem", method, pathOrDescriptor: path, description })

const unsupported = (method: string) =>
  Effect.fail(
    PlatformError.badArgument({
      module: "FileSystem",
      method,
      description: "not supported by the in-memory file system"
    })
  )

const typeOf = (node: Node): FileSystem.File.Type =>
  node.kind === "file" ? "File" : node.kind === "dir" ? "Directory" : "SymbolicLink"

const infoOf = (node: Node): FileSystem.File.Info => ({
  type: typeOf(node),
  mtime: Option.some(node.mtime),
  atime: Option.some(node.mtime),
  birthtime: Option.none(),
  dev: 0n,
  ino: Option.none(),
  mode: node.kind === "link" ? 0o777 : node.mode,
  nlink: Option.none(),
  uid: Option.none(),
  gid: Option.none(),
  rdev: Option.none(),
  size: ByteSize.bytes(node.kind === "file" ? node.bytes.length : 0),
  blksize: Option.none(),
  blocks: Option.none()
})

/** A file system holding `files` (absolute path → text or bytes); their directories are made. */
export const makeMemoryFileSystem = (files: Readonly<Record<string, string | Uint8Array>> = {}) => {
  const nodes = new Map<string, Node>([["/", { kind: "dir", mtime: new Date(), mode: 0o755 }]])
  const norm = (p: string) => NodePath.posix.resolve("/", p)

  /** Follows links in every component (and the last one when `followLast`). */
  const resolve = (path: string, followLast = true, depth = 0): string => {
    if (depth > 40) throw failure("BadResource", "resolve", path, "too many levels of symbolic links")
    const parts = norm(path).split("/").filter(Boolean)
    let at = "/"
    for (let i = 0; i < parts.length; i++) {
      const next = at === "/" ? `/${parts[i]}` : `${at}/${parts[i]}`
      const node = nodes.get(next)
      if (node?.kind === "link" && (followLast || i < parts.length - 1)) {
        at = resolve(NodePath.posix.resolve(at, node.target), true, depth + 1)
      } else at = next
    }
    return at
  }

  const attempt = <A>(method: string, path: string, f: () => A): Effect.Effect<A, PlatformError.PlatformError> =>
    Effect.try({
      try: f,
      catch: (e) => (e instanceof PlatformError.PlatformError ? e : failure("Unknown", method, path, String(e)))
    })

  const get = (method: string, path: string, follow = true): { readonly at: string; readonly node: Node } => {
    const at = resolve(path, follow)
    const node = nodes.get(at)
    if (node === undefined) throw failure("NotFound", method, path, "no such file or directory")
    return { at, node }
  }

  const parentDir = (method: string, path: string): string => {
    const parent = resolve(NodePath.posix.dirname(norm(path)))
    const node = nodes.get(parent)
    if (node === undefined) throw failure("NotFound", method, path, "no such directory")
    if (node.kind !== "dir") throw failure("BadResource", method, path, "not a directory")
    return `${parent === "/" ? "" : parent}/${NodePath.posix.basename(norm(path))}`
  }

  const children = (dir: string): Array<string> => {
    const prefix = dir === "/" ? "/" : `${dir}/`
    const out: Array<string> = []
    for (const p of nodes.keys())
      if (p !== dir && p.startsWith(prefix) && !p.slice(prefix.length).includes("/")) out.push(p)
    return out
  }

  const listDir = (method: string, path: string) => {
    const { at, node } = get(method, path)
    if (node.kind !== "dir") throw failure("BadResource", method, path, "not a directory")
    return children(at)
  }

  const mkdirp = (path: string) => {
    let at = ""
    for (const part of norm(path).split("/").filter(Boolean)) {
      at = `${at}/${part}`
      const node = nodes.get(resolve(at))
      if (node === undefined) nodes.set(resolve(at), { kind: "dir", mtime: new Date(), mode: 0o755 })
      else if (node.kind !== "dir") throw failure("AlreadyExists", "makeDirectory", path, "a file is in the way")
    }
  }

  const writeBytes = (method: string, path: string, bytes: Uint8Array, flag: FileSystem.OpenFlag = "w") => {
    const target = parentDir(method, resolve(path))
    const existing = nodes.get(target)
    if (existing !== undefined && flag.includes("x")) throw failure("AlreadyExists", method, path, "file exists")
    if (existing?.kind === "dir") throw failure("BadResource", method, path, "is a directory")
    const before = existing?.kind === "file" && flag.startsWith("a") ? existing.bytes : new Uint8Array(0)
    const next = new Uint8Array(before.length + bytes.length)
    next.set(before)
    next.set(bytes, before.length)
    nodes.set(target, {
      kind: "file",
      bytes: next,
      mtime: new Date(),
      mode: existing?.kind === "file" ? existing.mode : 0o644
    })
  }

  for (const [path, content] of Object.entries(files)) {
    mkdirp(NodePath.posix.dirname(norm(path)))
    writeBytes("init", path, typeof content === "string" ? new TextEncoder().encode(content) : content)
  }

  const open = (path: string, options?: { readonly flag?: FileSystem.OpenFlag | undefined }) =>
    attempt("open", path, () => {
      const flag = options?.flag ?? "r"
      if (flag !== "r")
        writeBytes("open", path, new Uint8Array(0), flag.startsWith("a") ? "a" : flag.includes("x") ? "wx" : "w")
      const { at, node } = get("open", path)
      if (node.kind !== "file") throw failure("BadResource", "open", path, "not a regular file")
      let cursor = 0
      const file = () => nodes.get(at) as Extract<Node, { kind: "file" }>
      const readInto = (buffer: Uint8Array, position: number) => {
        const bytes = file().bytes.subarray(position, position + buffer.length)
        buffer.set(bytes)
        return bytes.length
      }
      const write = (buffer: Uint8Array) => {
        const f = file()
        const end = cursor + buffer.length
        const next = new Uint8Array(Math.max(end, f.bytes.length))
        next.set(f.bytes)
        next.set(buffer, cursor)
        f.bytes = next
        f.mtime = new Date()
        cursor = end
        return buffer.length
      }
      const handle: FileSystem.File = {
        [FileSystem.FileTypeId]: FileSystem.FileTypeId,
        stat: Effect.sync(() => infoOf(file())),
        seek: (offset) =>
          Effect.sync(() => {
            cursor = Number(offset)
            return offset
          }),
        sync: Effect.void,
        read: (buffer, opts) =>
          Effect.sync(() => {
            if (opts?.position !== undefined) return readInto(buffer, Number(opts.position))
            const n = readInto(buffer, cursor)
            cursor += n
            return n
          }),
        readAlloc: (size, opts) =>
          Effect.sync(() => {
            const buffer = new Uint8Array(size)
            const n = opts?.position !== undefined ? readInto(buffer, Number(opts.position)) : readInto(buffer, cursor)
            if (opts?.position === undefined) cursor += n
            return n === 0 ? Option.none() : Option.some(buffer.subarray(0, n))
          }),
        truncate: (length = 0) =>
          Effect.sync(() => {
            file().bytes = file().bytes.slice(0, length)
          }),
        write: (buffer) => Effect.sync(() => write(buffer)),
        writeAll: (buffer) => Effect.sync(() => void write(buffer))
      } as FileSystem.File
      return handle
    })

  const remove = (
    path: string,
    options?: { readonly recursive?: boolean | undefined; readonly force?: boolean | undefined }
  ) =>
    attempt("remove", path, () => {
      const at = resolve(path, false)
      const node = nodes.get(at)
      if (node === undefined) {
        if (options?.force === true) return
        throw failure("NotFound", "remove", path, "no such file or directory")
      }
      if (node.kind === "dir" && children(at).length > 0 && options?.recursive !== true) {
        throw failure("BadResource", "remove", path, "directory not empty")
      }
      for (const p of [...nodes.keys()]) if (p === at || p.startsWith(`${at}/`)) nodes.delete(p)
    })

  let temps = 0
  const makeTemp = (
    options:
      | {
          readonly directory?: string | undefined
          readonly prefix?: string | undefined
          readonly suffix?: string | undefined
        }
      | undefined,
    kind: "dir" | "file"
  ): string => {
    const dir = norm(options?.directory ?? "/tmp")
    mkdirp(dir)
    const path = `${dir === "/" ? "" : dir}/${options?.prefix ?? "tmp-"}${++temps}${options?.suffix ?? ""}`
    nodes.set(
      path,
      kind === "dir"
        ? { kind, mtime: new Date(), mode: 0o700 }
        : { kind, bytes: new Uint8Array(0), mtime: new Date(), mode: 0o600 }
    )
    return path
  }

  return FileSystem.makeNoop({
    exists: (path) => Effect.sync(() => nodes.has(resolve(path))),
    access: (path) => attempt("access", path, () => void get("access", path)),
    stat: (path) => attempt("stat", path, () => infoOf(get("stat", path).node)),
    lstat: (path) => attempt("lstat", path, () => infoOf(get("lstat", path, false).node)),
    realPath: (path) => attempt("realPath", path, () => get("realPath", path).at),
    readLink: (path) =>
      attempt("readLink", path, () => {
        const { node } = get("readLink", path, false)
        if (node.kind !== "link") throw failure("BadResource", "readLink", path, "not a symbolic link")
        return node.target
      }),
    readDirectory: (path) =>
      attempt("readDirectory", path, () => listDir("readDirectory", path).map((p) => NodePath.posix.basename(p))),
    readDirectoryEntries: (path) =>
      attempt("readDirectoryEntries", path, () =>
        listDir("readDirectoryEntries", path).map((p) => ({
          name: NodePath.posix.basename(p),
          type: typeOf(nodes.get(p)!)
        }))
      ),
    readFile: (path) =>
      attempt("readFile", path, () => {
        const { node } = get("readFile", path)
        if (node.kind !== "file") throw failure("BadResource", "readFile", path, "is a directory")
        return node.bytes.slice()
      }),
    readFileString: (path) =>
      attempt("readFile", path, () => {
        const { node } = get("readFile", path)
        if (node.kind !== "file") throw failure("BadResource", "readFile", path, "is a directory")
        return new TextDecoder().decode(node.bytes)
      }),
    writeFile: (path, data, options) =>
      attempt("writeFile", path, () => writeBytes("writeFile", path, data, options?.flag)),
    writeFileString: (path, data, options) =>
      attempt("writeFile", path, () => writeBytes("writeFile", path, new TextEncoder().encode(data), options?.flag)),
    makeDirectory: (path, options) =>
      attempt("makeDirectory", path, () => {
        if (options?.recursive === true) return mkdirp(path)
        const target = parentDir("makeDirectory", path)
        if (nodes.has(target)) throw failure("AlreadyExists", "makeDirectory", path, "file exists")
        nodes.set(target, { kind: "dir", mtime: new Date(), mode: 0o755 })
      }),
    symlink: (target, path) =>
      attempt("symlink", path, () => {
        const at = parentDir("symlink", path)
        if (nodes.has(at)) throw failure("AlreadyExists", "symlink", path, "file exists")
        nodes.set(at, { kind: "link", target, mtime: new Date() })
      }),
    rename: (from, to) =>
      attempt("rename", from, () => {
        const source = resolve(from, false)
        if (!nodes.has(source)) throw failure("NotFound", "rename", from, "no such file or directory")
        const dest = parentDir("rename", to)
        for (const p of [...nodes.keys()]) if (p === dest || p.startsWith(`${dest}/`)) nodes.delete(p)
        for (const [p, node] of [...nodes.entries()]) {
          if (p === source || p.startsWith(`${source}/`)) {
            nodes.delete(p)
            nodes.set(dest + p.slice(source.length), node)
          }
        }
      }),
    chmod: (path, mode) =>
      attempt("chmod", path, () => {
        const { node } = get("chmod", path)
        if (node.kind !== "link") node.mode = mode
      }),
    chown: (path) => attempt("chown", path, () => void get("chown", path)),
    utimes: (path, _atime, mtime) =>
      attempt("utimes", path, () => {
        get("utimes", path).node.mtime = new Date(mtime)
      }),
    truncate: (path, length = 0) =>
      attempt("truncate", path, () => {
        const { node } = get("truncate", path)
        if (node.kind === "file") node.bytes = node.bytes.slice(0, length)
      }),
    remove,
    open,
    makeTempDirectory: (options) => Effect.sync(() => makeTemp(options, "dir")),
    makeTempDirectoryScoped: (options) =>
      Effect.acquireRelease(
        Effect.sync(() => makeTemp(options, "dir")),
        (dir) => remove(dir, { recursive: true, force: true }).pipe(Effect.ignore)
      ),
    makeTempFile: (options) => Effect.sync(() => makeTemp(options, "file")),
    makeTempFileScoped: (options) =>
      Effect.acquireRelease(
        Effect.sync(() => makeTemp(options, "file")),
        (file) => remove(file, { force: true }).pipe(Effect.ignore)
      ),
    link: () => unsupported("link"),
    watch: () =>
      Stream.fail(
        PlatformError.badArgument({
          module: "FileSystem",
          method: "watch",
          description: "not supported by the in-memory file system"
        })
      )
  })
}

export const MemoryFileSystem = {
  make: makeMemoryFileSystem,
  /** A FileSystem layer holding `files` (absolute path → text or bytes). */
  layer: (files: Readonly<Record<string, string | Uint8Array>> = {}) =>
    Layer.sync(FileSystem.FileSystem, () => makeMemoryFileSystem(files))
}

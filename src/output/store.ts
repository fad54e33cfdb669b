/**
 * Keeps every tool's FULL output, keyed by session and call id, so the `output` tool can
 * hand back the part the model's copy left out instead of re-running the command.
 * The in-memory layer is a byte-LRU per session, and a session's outputs (spilled files too) go
 * when `Sessions` ends it; a persistent layer can replace it behind the same service. A miss is never an error: it degrades to "re-run the tool".
 */

import { tmpdir } from "node:os"
import { Context, Effect, FileSystem, Layer, Option } from "effect"
import { type SessionsShape, sessionsOrOwn } from "../session/sessions.ts"
import type { ToolFailure } from "../tool/errors.ts"
import { type CaptureWriter, makeCaptureWriter } from "./capture.ts"
import { defaultSpillBytes, OutputConfig, spillSettingsConfig } from "./config.ts"
import { makeWriter, type OutputWriter, type Spill, spillPath } from "./spill.ts"
import { countLines } from "./truncate.ts"

export type { CaptureWriter } from "./capture.ts"
export type { OutputView, OutputWriter } from "./spill.ts"

import type { PutRequest, PutResult, StoredOutput } from "./stored-output.ts"

export type { PutRequest, PutResult, StoredOutput } from "./stored-output.ts"

export class OutputStore extends Context.Service<
  OutputStore,
  {
    readonly put: (request: PutRequest) => Effect.Effect<PutResult>
    /**
     * Opens an output that arrives in pieces (a running command). It stays in memory while it
     * fits the session's budget; past it, a spilling store moves it to a file it owns, and a
     * memory-only store keeps just its head and tail. Memory stays bounded either way.
     */
    readonly open: (request: Omit<PutRequest, "text">) => Effect.Effect<OutputWriter>
    /**
     * Opens an output a child process writes straight into a file (capture.ts); `show` gets the
     * newest part of what arrives, for a UI. A store with a directory of its own keeps a large
     * output in that file; one without uses a temporary file and keeps only the output's ends.
     */
    readonly capture: (
      request: Omit<PutRequest, "text">,
      show: (text: string, offset: number) => Effect.Effect<void>
    ) => Effect.Effect<CaptureWriter, ToolFailure>
    readonly get: (sessionId: string, id: string) => Effect.Effect<Option.Option<StoredOutput>>
    /** Ids held for a session, least recently used first. */
    readonly ids: (sessionId: string) => Effect.Effect<ReadonlyArray<string>>
  }
>()("freecode/OutputStore") {
  /** In memory, sized by OutputConfig's store settings. */
  static readonly layerMemory = Layer.effect(
    OutputStore,
    Effect.gen(function* () {
      const config = yield* OutputConfig
      return makeMemoryStore(config.storeBytes, yield* sessionsOrOwn, {
        keepChars: Math.max(config.maxChars, config.uiMaxChars)
      })
    })
  )
  /**
   * In memory, and outputs larger than a session's budget go to files in a temporary directory
   * the store owns (removed when the layer is released), up to FREECODE_OUTPUT_SPILL_BYTES on disk.
   */
  static readonly layerSpilling = Layer.effect(
    OutputStore,
    Effect.gen(function* () {
      const config = yield* OutputConfig
      const { spillBytes } = yield* spillSettingsConfig
      const fs = yield* FileSystem.FileSystem
      const dir = yield* fs.makeTempDirectoryScoped({ prefix: "freecode-outputs-" }).pipe(Effect.orDie)
      return makeMemoryStore(config.storeBytes, yield* sessionsOrOwn, {
        keepChars: Math.max(config.maxChars, config.uiMaxChars),
        spill: { fs, dir, maxBytes: spillBytes }
      })
    })
  )
}

interface Bucket {
  readonly entries: Map<string, StoredOutput>
  bytes: number
}

/**
 * An output held in memory as UTF-8 bytes outside the JS heap: a session holds up to its whole
 * budget of outputs, and as strings every young-generation GC would copy each new one (twice)
 * before it settled. Decoded only when asked for, which is rare (the `output` tool).
 */
class HeldOutput implements StoredOutput {
  readonly sessionId: string
  readonly id: string
  readonly tool: string
  readonly chars: number
  readonly lines: number
  readonly bytes: number
  private readonly utf8: Buffer
  constructor(entry: StoredOutput) {
    this.sessionId = entry.sessionId
    this.id = entry.id
    this.tool = entry.tool
    this.chars = entry.chars
    this.lines = entry.lines
    this.bytes = entry.bytes
    // Not Buffer.from: a small one is a slice of a shared 8 KB slab, which it would keep alive.
    this.utf8 = Buffer.allocUnsafeSlow(entry.bytes)
    this.utf8.write(entry.text, "utf8")
  }
  get text(): string {
    return this.utf8.toString("utf8")
  }
}

/**
 * Outputs this large or larger are held as bytes (HeldOutput). A smaller one stays a string: a
 * Buffer's own upkeep (its backing store, tracked by the GC from allocation to sweep) costs more
 * than copying a few hundred characters, and an MCP server's store holds thousands of them
 * (bench/mcp.ts: ls's ~600-byte outputs cost more CPU as Buffers; 4 KB reads less).
 */
export const HOLD_AS_BYTES_FROM = 2048

/** Maps keep insertion order, so delete-then-set moves a key to the most recent end. */
const touch = <K, V>(map: Map<K, V>, key: K, value: V): void => {
  map.delete(key)
  map.set(key, value)
}

const STORED: PutResult = { stored: true }

/** A streamed output past this many bytes goes to a file, in a store that has somewhere to spill. */
export const SPILL_AFTER_BYTES = 8 * 1024 * 1024

export interface StoreOptions {
  /** Characters of head and of tail kept for an output too large to hold (default 500,000). */
  readonly keepChars?: number
  /** Where outputs larger than a session's budget go; without it they are not kept. */
  readonly spill?: Spill
}

export const makeMemoryStore = (
  bytesPerSession: number,
  owner: SessionsShape,
  options: StoreOptions = {}
): OutputStore["Service"] => {
  const spill = options.spill
  /** Spilled outputs across all sessions, oldest first, for the disk budget. */
  const files = new Map<string, StoredOutput>()
  let diskBytes = 0

  const removeFiles = (paths: ReadonlyArray<string>): Effect.Effect<void> =>
    spill === undefined || paths.length === 0
      ? Effect.void
      : Effect.forEach(paths, (p) => Effect.ignore(spill.fs.remove(p, { force: true })), { discard: true })

  /** Forgets an entry's file accounting; returns the file to remove, if any. */
  const forget = (entry: StoredOutput): Array<string> => {
    if (entry.file === undefined) return []
    if (files.get(entry.file) === entry) {
      files.delete(entry.file)
      diskBytes -= entry.bytes - (entry.droppedBytes ?? 0)
    }
    return [entry.file]
  }

  // A session that ends takes its outputs with it, and its spilled files leave the disk.
  const buckets = owner.slot<Bucket>("outputs", (_, bucket) =>
    Effect.suspend(() => removeFiles([...bucket.entries.values()].flatMap(forget)))
  )
  const bucketFor = (sessionId: string): Bucket =>
    buckets.getOrCreate(sessionId, () => ({ entries: new Map(), bytes: 0 }))

  /** Files an entry; memory entries count against the session's bytes, spilled ones against the disk. */
  const file = (entry: StoredOutput): Effect.Effect<void> => Effect.suspend(() => removeFiles(fileNow(entry)))

  /** `file`'s bookkeeping, done now: returns the spilled files it let go of, for removal. */
  const fileNow = (entry: StoredOutput): Array<string> => {
    const gone: Array<string> = []
    // (A string with a lone surrogate would not survive UTF-8: it stays a string.)
    if (entry.file === undefined && entry.bytes >= HOLD_AS_BYTES_FROM && entry.text.isWellFormed())
      entry = new HeldOutput(entry)
    const bucket = bucketFor(entry.sessionId)
    const previous = bucket.entries.get(entry.id)
    if (previous !== undefined) {
      if (previous.file === undefined) bucket.bytes -= previous.bytes
      else gone.push(...forget(previous))
    }
    touch(bucket.entries, entry.id, entry)
    if (entry.file === undefined) bucket.bytes += entry.bytes
    else {
      files.set(entry.file, entry)
      diskBytes += entry.bytes - (entry.droppedBytes ?? 0)
      while (spill !== undefined && diskBytes > spill.maxBytes && files.size > 1) {
        const oldest = files.values().next().value!
        buckets.get(oldest.sessionId)?.entries.delete(oldest.id)
        gone.push(...forget(oldest))
      }
    }
    if (bucket.bytes > bytesPerSession) evict(bucket)
    return gone
  }

  /** Drops a session's oldest outputs until it fits; a spilled one's bytes are on disk, so it stays. */
  const evict = (bucket: Bucket) => {
    for (const oldest of bucket.entries.values()) {
      if (bucket.bytes <= bytesPerSession) break
      if (oldest.file !== undefined) continue
      bucket.entries.delete(oldest.id)
      bucket.bytes -= oldest.bytes
    }
  }

  const tooLarge = `it is larger than the per-session store (${bytesPerSession} bytes)`

  const open = (request: Omit<PutRequest, "text">): Effect.Effect<OutputWriter> =>
    makeWriter({
      request,
      // With somewhere to spill, a streamed output goes to disk early: holding up to the whole
      // session budget in strings (plus the garbage of building them) is what bounds RSS.
      memoryBytes: spill === undefined ? bytesPerSession : Math.min(bytesPerSession, SPILL_AFTER_BYTES),
      keepChars: options.keepChars ?? 500_000,
      spill,
      file,
      tooLarge
    })

  const capture = (request: Omit<PutRequest, "text">, show: (text: string, offset: number) => Effect.Effect<void>) =>
    makeCaptureWriter({
      request,
      path: spillPath(
        spill?.dir ?? tmpdir(),
        spill === undefined ? `freecode-${process.pid}-${request.id}` : request.id
      ),
      memoryBytes: spill === undefined ? bytesPerSession : Math.min(bytesPerSession, SPILL_AFTER_BYTES),
      maxBytes: spill?.maxBytes ?? defaultSpillBytes,
      keepChars: options.keepChars ?? 500_000,
      keepFile: spill !== undefined,
      file,
      tooLarge,
      show
    })

  return OutputStore.of({
    put: ({ sessionId, id, tool, text, lines }) =>
      Effect.suspend((): Effect.Effect<PutResult> => {
        const bytes = Buffer.byteLength(text, "utf8")
        if (bytes <= bytesPerSession) {
          const entry = { sessionId, id, tool, text, chars: text.length, lines: lines ?? countLines(text), bytes }
          // Filed at once: only a spilled output it evicts leaves a file to remove.
          const gone = fileNow(entry)
          return gone.length === 0 ? Effect.succeed(STORED) : Effect.as(removeFiles(gone), STORED)
        }
        if (spill === undefined) return Effect.succeed({ stored: false, reason: tooLarge })
        return Effect.gen(function* () {
          const writer = yield* open({ sessionId, id, tool })
          yield* writer.write(text)
          return (yield* writer.commit).result
        })
      }),
    open,
    capture,
    get: (sessionId, id) =>
      Effect.sync(() => {
        const bucket = buckets.get(sessionId)
        const entry = bucket?.entries.get(id)
        if (bucket === undefined || entry === undefined) return Option.none()
        owner.touch(sessionId)
        touch(bucket.entries, id, entry)
        return Option.some(entry)
      }),
    ids: (sessionId) => Effect.sync(() => [...(buckets.get(sessionId)?.entries.keys() ?? [])])
  })
}

/**
 * Keeps every tool's FULL output, keyed by session and call id, so the `output` tool can
 * hand back the part the model's copy left out instead of re-running the command.
 * The in-memory layer is a byte-LRU inside a session-LRU; a persistent layer can replace it
 * behind the same service. A miss is never an error: it degrades to "re-run the tool".
 */
import { Context, Effect, Layer, Option } from "effect"
import { OutputConfig } from "./config.ts"
import { countLines } from "./truncate.ts"

export interface StoredOutput {
  readonly sessionId: string
  readonly id: string
  readonly tool: string
  readonly text: string
  readonly chars: number
  readonly lines: number
  readonly bytes: number
}

export interface PutRequest {
  readonly sessionId: string
  readonly id: string
  readonly tool: string
  readonly text: string
}

/** Whether a put was kept; a refused put says why, so the model's marker can say so too. */
export type PutResult = { readonly stored: true } | { readonly stored: false; readonly reason: string }

export class OutputStore extends Context.Service<
  OutputStore,
  {
    readonly put: (request: PutRequest) => Effect.Effect<PutResult>
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
      return makeMemoryStore(config.storeBytes, config.storeSessions)
    })
  )
}

interface Bucket {
  readonly entries: Map<string, StoredOutput>
  bytes: number
}

/** Maps keep insertion order, so delete-then-set moves a key to the most recent end. */
const touch = <K, V>(map: Map<K, V>, key: K, value: V): void => {
  map.delete(key)
  map.set(key, value)
}

export const makeMemoryStore = (bytesPerSession: number, sessions: number): OutputStore["Service"] => {
  const buckets = new Map<string, Bucket>()

  const bucketFor = (sessionId: string): Bucket => {
    const existing = buckets.get(sessionId)
    const bucket = existing ?? { entries: new Map(), bytes: 0 }
    touch(buckets, sessionId, bucket)
    while (buckets.size > sessions) buckets.delete(buckets.keys().next().value!)
    return bucket
  }

  return OutputStore.of({
    put: ({ sessionId, id, tool, text }) =>
      Effect.sync((): PutResult => {
        const bytes = Buffer.byteLength(text, "utf8")
        if (bytes > bytesPerSession) {
          return { stored: false, reason: `it is larger than the per-session store (${bytesPerSession} bytes)` }
        }
        const bucket = bucketFor(sessionId)
        const previous = bucket.entries.get(id)
        if (previous !== undefined) bucket.bytes -= previous.bytes
        touch(bucket.entries, id, { sessionId, id, tool, text, chars: text.length, lines: countLines(text), bytes })
        bucket.bytes += bytes
        while (bucket.bytes > bytesPerSession) {
          const oldest = bucket.entries.values().next().value!
          bucket.entries.delete(oldest.id)
          bucket.bytes -= oldest.bytes
        }
        return { stored: true }
      }),
    get: (sessionId, id) =>
      Effect.sync(() => {
        const bucket = buckets.get(sessionId)
        const entry = bucket?.entries.get(id)
        if (bucket === undefined || entry === undefined) return Option.none()
        touch(buckets, sessionId, bucket)
        touch(bucket.entries, id, entry)
        return Option.some(entry)
      }),
    ids: (sessionId) => Effect.sync(() => [...(buckets.get(sessionId)?.entries.keys() ?? [])])
  })
}

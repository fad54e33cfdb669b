/**
 * Where the shared state lives, from one string: `postgres://…` or `postgresql://…` (PostgreSQL
 * through `@effect/sql-pg`), else a file path or `sqlite:PATH` (the embedded `node:sqlite`
 * store). The layer opens the database and brings its schema up to date before anything uses it.
 */
import { Effect, Layer, Redacted, Schema } from "effect"
import * as SqlClient from "effect/sql/SqlClient"
import { lazyImport } from "../load/lazy.ts"
import { migrate } from "./migrations.ts"
import * as SqliteNode from "./sqlite-node.ts"

// The PostgreSQL client (with node:tls) only for a postgres:// store: every `mcp` and `run`
// would otherwise load it at start (docs/benchmarks.md, "Start-up").
const sqlPg = lazyImport(() => import("@effect/sql-pg"))

/** The store could not be opened or migrated: names it (without its password) and what to do. */
export class StoreUnavailable extends Schema.TaggedError<StoreUnavailable>()("StoreUnavailable", {
  store: Schema.String,
  message: Schema.String
}) {}

export type StoreLocation =
  | { readonly engine: "postgres"; readonly url: string }
  | { readonly engine: "sqlite"; readonly file: string }

export const parseStore = (text: string): StoreLocation =>
  /^postgres(?:ql)?:\/\//i.test(text)
    ? { engine: "postgres", url: text }
    : { engine: "sqlite", file: text.startsWith("sqlite:") ? text.slice("sqlite:".length) : text }

/** The location as it may be shown: a URL's password replaced. */
export const describeStore = (location: StoreLocation): string => {
  if (location.engine === "sqlite") return location.file
  try {
    const url = new URL(location.url)
    if (url.password !== "") url.password = "***"
    return url.toString()
  } catch {
    return "postgres://(unparsable URL)"
  }
}

export const storeLayer = (location: StoreLocation): Layer.Layer<SqlClient.SqlClient, StoreUnavailable> => {
  const shown = describeStore(location)
  const client: Layer.Layer<SqlClient.SqlClient, unknown> =
    location.engine === "postgres"
      ? Layer.unwrap(
          Effect.map(Effect.promise(sqlPg), ({ PgClient }) =>
            PgClient.layerFrom(PgClient.make({ url: Redacted.make(location.url), applicationName: "freecode-tools" }))
          )
        )
      : SqliteNode.layer({ filename: location.file })
  const migrated = Layer.effectDiscard(migrate).pipe(Layer.provideMerge(client))
  return migrated.pipe(
    Layer.catchCause((cause) =>
      Layer.effect(
        SqlClient.SqlClient,
        Effect.fail(
          new StoreUnavailable({
            store: shown,
            message: `the state store ${shown} could not be opened: ${String(cause).split("\n")[0]}. Check that it is running and reachable, then start again.`
          })
        )
      )
    )
  )
}

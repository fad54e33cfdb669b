/**
 * How webfetch reaches the network: the resolver behind both SSRF checks, and the undici
 * dispatchers whose sockets connect only through the guarded lookup (guard.ts). Dispatchers are
 * long-lived, so connections are reused across calls; the layer closes them.
 *
 * Pools are split by approval, because a pooled connection skips the lookup: a connection made
 * for a call the person approved for an internal host must never serve a call that was not. So
 * there is one dispatcher that refuses every internal address, and one per approved host that
 * lets that host (only) reach one.
 */
import { Context, Effect, Layer } from "effect"
import type { Agent, Dispatcher } from "undici"
import { type Resolve, systemResolve } from "./address.ts"
import { guardedLookup } from "./guard.ts"

/** Approved hosts whose dispatchers are kept; the least recently used one is closed past this. */
export const MAX_APPROVED_HOSTS = 16

/** undici loads on first use: importing it takes 0.2–0.3 s, which a session that never fetches should not pay. */
let undici: Promise<typeof import("undici")> | undefined
export const loadUndici = () => {
  undici ??= import("undici")
  return undici
}

export interface WebNetworkShape {
  readonly resolve: Resolve
  /** The dispatcher for a call: refuses internal addresses, except `approvedHost`'s. */
  readonly dispatcher: (approvedHost: string | undefined) => Promise<Dispatcher>
}

const makeDispatchers = (resolve: Resolve) => {
  const agent = async (approvedHost: string | undefined): Promise<Agent> =>
    new (await loadUndici()).Agent({ connect: { lookup: guardedLookup(resolve, approvedHost) } })
  let strict: Promise<Agent> | undefined
  const approved = new Map<string, Promise<Agent>>()
  const dispatcher = (approvedHost: string | undefined): Promise<Dispatcher> => {
    if (approvedHost === undefined) {
      strict ??= agent(undefined)
      return strict
    }
    const kept = approved.get(approvedHost)
    if (kept !== undefined) {
      approved.delete(approvedHost) // re-inserted below: the Map's order is least recently used first
      approved.set(approvedHost, kept)
      return kept
    }
    const made = agent(approvedHost)
    approved.set(approvedHost, made)
    if (approved.size > MAX_APPROVED_HOSTS) {
      const [oldest, old] = approved.entries().next().value!
      approved.delete(oldest)
      void old.then((a) => a.close()) // graceful: requests already sent on it finish first
    }
    return made
  }
  const close = () =>
    Promise.all([strict, ...approved.values()].map((a) => a?.then((agent) => agent.close()).catch(() => undefined)))
  return { dispatcher, close }
}

export class WebNetwork extends Context.Service<WebNetwork, WebNetworkShape>()("freecode/WebNetwork") {
  /** A network resolving with `resolve` (tests inject one that answers like a rebinding DNS server). */
  static readonly layerWith = (resolve: Resolve) =>
    Layer.effect(
      WebNetwork,
      Effect.acquireRelease(
        Effect.sync(() => makeDispatchers(resolve)),
        (d) => Effect.promise(d.close)
      ).pipe(Effect.map((d) => WebNetwork.of({ resolve, dispatcher: d.dispatcher })))
    )

  /** The system resolver (node:dns lookup). */
  static readonly layer = WebNetwork.layerWith(systemResolve)
}

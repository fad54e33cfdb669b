/**
 * The SSRF guard at connect time: the `lookup` a socket uses to turn the URL's name into the
 * address it connects to. Checking the name before the call is not enough, since `fetch`
 * resolves it again when it connects and a DNS answer can change in between (DNS rebinding);
 * here the check runs on the very answer the socket connects to.
 */
import type { LookupAddress, LookupOptions } from "node:dns"
import type { LookupFunction } from "node:net"
import { internalOf, type Resolve } from "./address.ts"

/** A connection refused because the name resolved to an internal address the call was not approved for. */
export class InternalAddressRefused extends Error {
  readonly code = "EINTERNALADDRESS"
  readonly host: string
  readonly addresses: ReadonlyArray<string>
  constructor(host: string, addresses: ReadonlyArray<string>) {
    super(`${host} resolved to ${addresses.join(", ")}, a local or private address`)
    this.name = "InternalAddressRefused"
    this.host = host
    this.addresses = addresses
  }
}

const familyOf = (family: LookupOptions["family"]): 0 | 4 | 6 =>
  family === 4 || family === "IPv4" ? 4 : family === 6 || family === "IPv6" ? 6 : 0

const notFound = (host: string) =>
  Object.assign(new Error(`getaddrinfo ENOTFOUND ${host}`), { code: "ENOTFOUND", hostname: host })

/**
 * A `net.connect` lookup that resolves with `resolve` and refuses any answer holding an internal
 * address, except for `approvedHost`: the one host the person approved for this call.
 */
export const guardedLookup =
  (resolve: Resolve, approvedHost: string | undefined): LookupFunction =>
  (hostname, options, callback) => {
    const host = hostname.toLowerCase()
    resolve(host).then(
      (answer) => {
        const internal = internalOf(host, answer)
        if (internal.length > 0 && host !== approvedHost)
          return callback(new InternalAddressRefused(host, internal), "")
        const family = familyOf(options.family)
        const addresses: Array<LookupAddress> = answer.filter((a) => family === 0 || a.family === family)
        const first = addresses[0]
        if (first === undefined) return callback(notFound(host), "")
        if (options.all === true) callback(null, addresses)
        else callback(null, first.address, first.family)
      },
      (error: NodeJS.ErrnoException) => callback(error, "")
    )
  }

/** The refusal somewhere in a thrown error's causes (undici wraps it as "fetch failed"). */
export const findRefusal = (e: unknown): InternalAddressRefused | undefined => {
  for (let at: unknown = e, depth = 0; at !== undefined && at !== null && depth < 6; depth++) {
    if (at instanceof InternalAddressRefused) return at
    const nested = (at as { errors?: unknown }).errors
    if (Array.isArray(nested)) {
      const found = nested.map(findRefusal).find((r) => r !== undefined)
      if (found !== undefined) return found
    }
    at = (at as { cause?: unknown }).cause
  }
  return undefined
}

/**
 * SSRF guard: which addresses a fetch may reach without a person's approval. Loopback, private,
 * link-local, carrier-grade NAT, unique-local and unspecified addresses all reach machines the
 * person did not put on the public internet, so a call to them must be approved. The same test
 * runs twice: on the name before the call (checkPermissions asks) and on the addresses actually
 * connected to (guard.ts), so a DNS answer that changes in between cannot slip through.
 */
import type { LookupAddress } from "node:dns"
import { lookup } from "node:dns/promises"
import { isIP } from "node:net"

const v4Parts = (ip: string): ReadonlyArray<number> => ip.split(".").map(Number)

const isInternalV4 = (ip: string): boolean => {
  const [a = 0, b = 0] = v4Parts(ip)
  return (
    a === 0 || // "this network", 0.0.0.0
    a === 10 ||
    a === 127 ||
    (a === 100 && b >= 64 && b <= 127) || // carrier-grade NAT
    (a === 169 && b === 254) || // link-local, cloud metadata
    (a === 172 && b >= 16 && b <= 31) ||
    (a === 192 && b === 168)
  )
}

const isInternalV6 = (ip: string): boolean => {
  const lower = ip.toLowerCase()
  if (lower === "::" || lower === "::1") return true
  const mapped = /^::ffff:(\d+\.\d+\.\d+\.\d+)$/.exec(lower)
  if (mapped) return isInternalV4(mapped[1]!)
  return /^f[cd]/.test(lower) || /^fe[89ab]/.test(lower) // unique-local fc00::/7, link-local fe80::/10
}

/** True for an IP literal that is loopback, private, link-local or unspecified. */
export const isInternalAddress = (ip: string): boolean => {
  const kind = isIP(ip)
  return kind === 4 ? isInternalV4(ip) : kind === 6 ? isInternalV6(ip) : false
}

/** The host of a URL as DNS sees it: lower case, IPv6 without brackets. */
export const hostOf = (url: URL): string => url.hostname.replace(/^\[|\]$/g, "").toLowerCase()

/** Resolves a name to all its addresses. Injected so tests can answer like a rebinding DNS server. */
export type Resolve = (host: string) => Promise<ReadonlyArray<LookupAddress>>

export const systemResolve: Resolve = (host) => lookup(host, { all: true })

/** `localhost` and `*.localhost` are loopback whatever a resolver says (RFC 6761). */
const isLocalhostName = (host: string) => host === "localhost" || host.endsWith(".localhost")

/** Which of `addresses`, the answer for `host`, are internal. */
export const internalOf = (host: string, addresses: ReadonlyArray<LookupAddress>): ReadonlyArray<string> =>
  isLocalhostName(host.toLowerCase())
    ? addresses.length === 0
      ? ["127.0.0.1"]
      : addresses.map((a) => a.address)
    : addresses.map((a) => a.address).filter(isInternalAddress)

/**
 * The internal addresses `host` resolves to (empty when all are public). A name that does not
 * resolve yields nothing here: the fetch itself then fails with a clear message.
 */
export const internalAddresses = async (
  host: string,
  resolve: Resolve = systemResolve
): Promise<ReadonlyArray<string>> => {
  if (isIP(host) !== 0) return isInternalAddress(host) ? [host] : []
  if (isLocalhostName(host)) return ["127.0.0.1"]
  try {
    return internalOf(host, await resolve(host))
  } catch {
    return []
  }
}

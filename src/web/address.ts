/**
 * SSRF guard: which addresses a fetch may reach without a person's approval. Loopback, private,
 * link-local, carrier-grade NAT, unique-local and unspecified addresses all reach machines the
 * person did not put on the public internet, so a call to them must be approved. The same test
 * runs twice: on the name before the call (checkPermissions asks) and on the addresses actually
 * connected to (guard.ts), so a DNS answer that changes in between cannot slip through.
 */
import type { LookupAddress } from "node:dns"
import { BlockList, isIP } from "node:net"

// Both lists are built on the first check, not at import: every start of the CLI loads this module.
/**
 * IPv4 ranges that are not the public internet (RFC 6890's special-purpose registry, the ones a
 * request could reach something on): this network and 0.0.0.0, private, loopback, carrier-grade
 * NAT, link-local (cloud metadata), IETF protocol assignments, benchmarking, multicast, reserved
 * and broadcast. Node's BlockList matches them, not a hand comparison of octets.
 */
let v4: BlockList | undefined
const V4 = (): BlockList => {
  if (v4 !== undefined) return v4
  v4 = new BlockList()
  for (const [net, prefix] of [
    ["0.0.0.0", 8],
    ["10.0.0.0", 8],
    ["100.64.0.0", 10],
    ["127.0.0.0", 8],
    ["169.254.0.0", 16],
    ["172.16.0.0", 12],
    ["192.0.0.0", 24],
    ["192.168.0.0", 16],
    ["198.18.0.0", 15],
    ["224.0.0.0", 4],
    ["240.0.0.0", 4]
  ] as const)
    v4.addSubnet(net, prefix, "ipv4")
  return v4
}

/**
 * IPv6 ranges that are not the public internet: unspecified and loopback, discard-only,
 * NAT64's local-use prefix, unique-local, link-local, the old site-local, and multicast.
 */
let v6: BlockList | undefined
const V6 = (): BlockList => {
  if (v6 !== undefined) return v6
  v6 = new BlockList()
  v6.addAddress("::", "ipv6")
  v6.addAddress("::1", "ipv6")
  for (const [net, prefix] of [
    ["100::", 64],
    ["64:ff9b:1::", 48],
    ["fc00::", 7],
    ["fe80::", 10],
    ["fec0::", 10],
    ["ff00::", 8]
  ] as const)
    v6.addSubnet(net, prefix, "ipv6")
  return v6
}

/** The 16 bytes of an IPv6 literal (a zone id dropped); undefined when it does not parse. */
const v6Bytes = (ip: string): Uint8Array | undefined => {
  const bare = ip.replace(/%.*$/, "")
  if (isIP(bare) !== 6) return undefined
  let text = bare
  // A dotted IPv4 tail (`::ffff:127.0.0.1`) becomes two groups.
  const tail = /(\d+)\.(\d+)\.(\d+)\.(\d+)$/.exec(text)
  if (tail !== null) {
    const [a, b, c, d] = tail.slice(1).map(Number) as [number, number, number, number]
    text = `${text.slice(0, tail.index)}${((a << 8) | b).toString(16)}:${((c << 8) | d).toString(16)}`
  }
  const [head = "", rest] = text.split("::")
  const left = head === "" ? [] : head.split(":")
  const right = rest === undefined || rest === "" ? [] : rest.split(":")
  const groups = rest === undefined ? left : [...left, ...Array(8 - left.length - right.length).fill("0"), ...right]
  if (groups.length !== 8) return undefined
  const bytes = new Uint8Array(16)
  groups.forEach((g, i) => {
    const n = Number.parseInt(g, 16)
    bytes[2 * i] = n >> 8
    bytes[2 * i + 1] = n & 0xff
  })
  return bytes
}

const v4At = (b: Uint8Array, at: number, xor = 0) => [0, 1, 2, 3].map((i) => (b[at + i]! ^ xor).toString()).join(".")

const zeros = (b: Uint8Array, from: number, to: number) => b.subarray(from, to).every((x) => x === 0)

/**
 * The IPv4 addresses an IPv6 address carries, which a host, a gateway or a translator may deliver
 * to: IPv4-mapped (`::ffff:127.0.0.1`, also written `::ffff:7f00:1`), IPv4-compatible
 * (`::127.0.0.1`), IPv4-translated (`::ffff:0:a.b.c.d`), NAT64 (`64:ff9b::/96`), 6to4
 * (`2002::/16`) and Teredo (`2001::/32`, its server and its obfuscated client).
 */
const embeddedV4 = (b: Uint8Array): ReadonlyArray<string> => {
  if (zeros(b, 0, 10) && b[10] === 0xff && b[11] === 0xff) return [v4At(b, 12)]
  if (zeros(b, 0, 12)) return [v4At(b, 12)]
  if (zeros(b, 0, 8) && b[8] === 0xff && b[9] === 0xff && zeros(b, 10, 12)) return [v4At(b, 12)]
  if (b[0] === 0 && b[1] === 0x64 && b[2] === 0xff && b[3] === 0x9b && zeros(b, 4, 12)) return [v4At(b, 12)]
  if (b[0] === 0x20 && b[1] === 0x02) return [v4At(b, 2)]
  if (b[0] === 0x20 && b[1] === 0x01 && b[2] === 0 && b[3] === 0) return [v4At(b, 4), v4At(b, 12, 0xff)]
  return []
}

/**
 * True for an IP literal that is loopback, private, link-local, unspecified or otherwise not the
 * public internet — in any of its IPv6 forms that carry an IPv4 address. A literal that cannot
 * be read counts as internal: a check that cannot decide refuses.
 */
export const isInternalAddress = (ip: string): boolean => {
  const kind = isIP(ip)
  if (kind === 4) return V4().check(ip, "ipv4")
  const bytes = v6Bytes(ip)
  if (bytes === undefined) return kind === 6 || ip.includes("%")
  const v6 = ip.replace(/%.*$/, "")
  return V6().check(v6, "ipv6") || embeddedV4(bytes).some((v4) => V4().check(v4, "ipv4"))
}

/**
 * The host of a URL as DNS sees it: lower case, IPv6 without brackets, without the trailing dots
 * of a fully qualified name (`localhost.` is `localhost`, and `example.com.` matches a rule for
 * `example.com`). The URL parser has already turned every IPv4 spelling (`2130706433`,
 * `0177.0.0.1`, `0x7f.1`, `127.1`, `0`) into its dotted form.
 */
export const hostOf = (url: URL): string =>
  url.hostname
    .replace(/^\[|\]$/g, "")
    .toLowerCase()
    .replace(/\.+$/, "")

/** Resolves a name to all its addresses. Injected so tests can answer like a rebinding DNS server. */
export type Resolve = (host: string) => Promise<ReadonlyArray<LookupAddress>>

// node:dns taken on the first fetch, not imported: loading it sets up a resolver (it reads
// /etc/resolv.conf) on every start of the CLI.
export const systemResolve: Resolve = (host) =>
  process.getBuiltinModule("node:dns/promises").lookup(host, { all: true })

/** `localhost` and `*.localhost` are loopback whatever a resolver says (RFC 6761), with or without trailing dots. */
const isLocalhostName = (host: string) => {
  const name = host.replace(/\.+$/, "")
  return name === "localhost" || name.endsWith(".localhost")
}

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
  if (isIP(host) !== 0 || host.includes(":")) return isInternalAddress(host) ? [host] : []
  if (isLocalhostName(host)) return ["127.0.0.1"]
  try {
    return internalOf(host, await resolve(host))
  } catch {
    return []
  }
}

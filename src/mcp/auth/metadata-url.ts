/** Where a protected resource publishes its metadata (RFC 9728). A leaf: the CLI names it without loading jose. */

/** RFC 9728's well-known prefix; the resource's path follows it. */
export const PROTECTED_RESOURCE_PREFIX = "/.well-known/oauth-protected-resource"

/** Where the metadata of `resource` is published (RFC 9728 §3.1: the well-known prefix, then its path). */
export const metadataUrlOf = (resource: string): URL => {
  const url = new URL(resource)
  const path = url.pathname === "/" ? "" : url.pathname
  return new URL(`${PROTECTED_RESOURCE_PREFIX}${path}`, url.origin)
}

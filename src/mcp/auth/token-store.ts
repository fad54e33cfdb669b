/**
 * What a login to a remote MCP server leaves behind: the client registration, the tokens and
 * what discovery found, one file per server and user under the state folder's `oauth/`, mode
 * 0600 in a 0700 folder. A file others can read, or another user's, is refused rather than
 * used: it holds a refresh token. Written whole through a temporary file and a rename, so a
 * second process never reads half of one.
 */
import { createHash, randomBytes } from "node:crypto"
import * as NodeFs from "node:fs"
import * as NodePath from "node:path"
import type { OAuthClientInformationMixed, OAuthDiscoveryState, OAuthTokens } from "@modelcontextprotocol/client"

export interface StoredLogin {
  /** The MCP server's URL this entry is for. */
  readonly server: string
  readonly clientInformation?: OAuthClientInformationMixed
  /** The redirect URL the client was registered with (its port is tried first on the next login). */
  readonly redirectUrl?: string
  readonly tokens?: OAuthTokens
  /** When the tokens were saved (ms since the epoch): with expires_in, when the access token ends. */
  readonly savedAt?: number
  readonly discovery?: OAuthDiscoveryState
  /** The scope the last login asked for: a 403 for no more than it is not mended by logging in again. */
  readonly asked?: string
  /**
   * What the server asked for since the last login, when a request in the background was refused
   * (a call's 401, a 403 for a wider scope): the next login asks for it too. Holds no secret.
   */
  readonly wanted?: { readonly scope?: string; readonly resourceMetadataUrl?: string }
}

/** The server's URL as one key: no fragment, no trailing slash on a bare origin. */
export const serverKey = (serverUrl: string): string => {
  const url = new URL(serverUrl)
  url.hash = ""
  return url.href
}

const uid = () => (typeof process.getuid === "function" ? process.getuid() : 0)

/** The entry file for `serverUrl` and the current user. */
export const loginFile = (stateDir: string, serverUrl: string): string =>
  NodePath.join(
    stateDir,
    "oauth",
    `${createHash("sha256")
      .update(`${uid()}\n${serverKey(serverUrl)}`)
      .digest("hex")
      .slice(0, 32)}.json`
  )

export class LoginStoreError extends Error {}

/** The entry for `serverUrl`, or undefined when there is none. */
export const readLogin = (stateDir: string, serverUrl: string): StoredLogin | undefined => {
  const file = loginFile(stateDir, serverUrl)
  let stat: NodeFs.Stats
  try {
    stat = NodeFs.statSync(file)
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code === "ENOENT") return undefined
    throw e
  }
  if ((stat.mode & 0o077) !== 0) {
    throw new LoginStoreError(
      `${file} can be read by others (mode ${(stat.mode & 0o777).toString(8)}); it holds tokens. Run: chmod 600 ${file}, or log in again after removing it`
    )
  }
  if (stat.uid !== uid()) {
    throw new LoginStoreError(`${file} belongs to another user (uid ${stat.uid}); remove it and log in again`)
  }
  let entry: StoredLogin
  try {
    entry = JSON.parse(NodeFs.readFileSync(file, "utf8")) as StoredLogin
  } catch {
    throw new LoginStoreError(`${file} is not a saved login (not JSON); remove it and log in again`)
  }
  // A hash collision or a copied file: the entry must say it is this server's.
  return entry.server === serverKey(serverUrl) ? entry : undefined
}

/** Replaces the entry for `serverUrl` with `entry` (whole), or removes it when undefined. */
export const writeLogin = (stateDir: string, serverUrl: string, entry: StoredLogin | undefined): void => {
  const file = loginFile(stateDir, serverUrl)
  if (entry === undefined) {
    NodeFs.rmSync(file, { force: true })
    return
  }
  const dir = NodePath.dirname(file)
  NodeFs.mkdirSync(dir, { recursive: true, mode: 0o700 })
  NodeFs.chmodSync(dir, 0o700)
  const temporary = `${file}.${randomBytes(6).toString("hex")}.tmp`
  try {
    NodeFs.writeFileSync(temporary, JSON.stringify({ ...entry, server: serverKey(serverUrl) }), {
      mode: 0o600,
      flag: "wx"
    })
    NodeFs.renameSync(temporary, file)
  } finally {
    NodeFs.rmSync(temporary, { force: true })
  }
}

/** Changes the entry for `serverUrl` by `change` (from empty when there is none). */
export const updateLogin = (
  stateDir: string,
  serverUrl: string,
  change: (entry: StoredLogin) => StoredLogin | undefined
): void => writeLogin(stateDir, serverUrl, change(readLogin(stateDir, serverUrl) ?? { server: serverKey(serverUrl) }))

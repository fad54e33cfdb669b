/**
 * The secret of a client registered by hand (`oauth.clientId` with `clientSecretEnv` or
 * `clientSecretFile`): read when it is used, never from the config file itself (which is often
 * committed), and never put in a message — a failure names the variable or the file only.
 */
import * as NodeFs from "node:fs"
import * as NodePath from "node:path"
import type { OAuthClientConfig } from "../config.ts"
import type { OAuthClientSettings } from "./client-provider.ts"

export class ClientSecretError extends Error {}

/** The settings the OAuth client uses, with the secret read; `root` anchors a relative file. */
export const oauthSettingsOf = (
  config: typeof OAuthClientConfig.Type | undefined,
  root: string,
  env: Readonly<Record<string, string | undefined>> = process.env
): OAuthClientSettings | undefined => {
  if (config === undefined) return undefined
  const { clientSecretEnv, clientSecretFile, ...settings } = config
  if (clientSecretEnv === undefined && clientSecretFile === undefined) return settings
  if (clientSecretEnv !== undefined && clientSecretFile !== undefined) {
    throw new ClientSecretError("oauth: give clientSecretEnv or clientSecretFile, not both")
  }
  if (settings.clientId === undefined) {
    throw new ClientSecretError("oauth: a client secret belongs to a clientId registered by hand; give clientId too")
  }
  if (clientSecretEnv !== undefined) {
    const value = env[clientSecretEnv]
    if (value === undefined || value === "") {
      throw new ClientSecretError(`oauth.clientSecretEnv names ${clientSecretEnv}, which is not set`)
    }
    return { ...settings, clientSecret: value }
  }
  const file = NodePath.resolve(root, clientSecretFile!)
  let text: string
  try {
    text = NodeFs.readFileSync(file, "utf8")
  } catch (e) {
    throw new ClientSecretError(
      `oauth.clientSecretFile ${file} cannot be read (${(e as NodeJS.ErrnoException).code ?? "unreadable"})`
    )
  }
  // A trailing newline is the editor's, not the secret's.
  const value = text.replace(/\r?\n$/, "")
  if (value === "") throw new ClientSecretError(`oauth.clientSecretFile ${file} is empty`)
  return { ...settings, clientSecret: value }
}

/** The little of oidc-provider (which ships no types) the test authorization server uses. */
declare module "oidc-provider" {
  import type { IncomingMessage, ServerResponse } from "node:http"

  export interface ClientLike {
    readonly clientId: string
    grantTypeAllowed(grant: string): boolean
  }

  export interface Configuration {
    readonly [key: string]: unknown
    readonly features?: Record<string, unknown>
  }

  export default class Provider {
    constructor(issuer: string, configuration: Configuration)
    callback(): (req: IncomingMessage, res: ServerResponse) => void
  }
}

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

  /** The Koa context a middleware sees (what the tests read of it). */
  export interface MiddlewareContext {
    readonly path: string
    readonly status: number
    readonly headers: Record<string, string | undefined>
  }

  export default class Provider {
    constructor(issuer: string, configuration: Configuration)
    callback(): (req: IncomingMessage, res: ServerResponse) => void
    use(middleware: (ctx: MiddlewareContext, next: () => Promise<void>) => Promise<void>): void
  }
}

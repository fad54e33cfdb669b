/** What the caller of the call path says about a call: its session, its person, its cancel. */
import type { Effect } from "effect"
import type { Searchability } from "../tool/tool.ts"

/** A person (or policy) deciding on a call that asks for approval. */
export interface ApprovalRequest {
  readonly tool: string
  readonly args: unknown
  readonly reason: string
}

/** What the caller knows about the turn a call belongs to. */
export interface CallContext {
  readonly sessionId: string
  /** Whether the model can look at images; false unless said (a text-only model never pays for one). */
  readonly canSeeImages?: boolean
  /** Completes when the person cancels; tools with interruptBehavior "cancel" stop then. */
  readonly cancelled?: Effect.Effect<void>
  /** Answers a call that asks for approval; without it, the system's Approval is asked (or nobody). */
  readonly approve?: (request: ApprovalRequest) => Effect.Effect<boolean>
  /** What a search may show; authorize sets it from the permission rules (see ToolContext). */
  readonly searchable?: Searchability
  /**
   * Sees this call's live output, window by window, as the tool emits it (the MCP server sends
   * it to its client). Called synchronously: it must not block. ToolEvents carries the same.
   */
  readonly onOutput?: (chunk: string, offset: number) => void
  /**
   * Set on a call a program made (the `code` tool): the program's own call id. Hooks see it as
   * `parent_tool_use_id`, events as `parentCallId`.
   */
  readonly parentCallId?: string
}

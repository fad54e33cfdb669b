/** freecode-tools: the tool layer of a coding agent. */
export { ToolSystem, type ToolSystemOptions } from "../layers/live.ts"
export { registerTools, toolSystem } from "../layers/system.ts"
export { Dispatcher } from "./dispatch/dispatcher.ts"
export {
  EVENT_WINDOW_CHARS,
  type ToolCompleteEvent,
  type ToolEvent,
  ToolEvents,
  type ToolOutputEvent,
  type ToolStartEvent
} from "./events/events.ts"
export { planToolBatches, type ToolBatch } from "./orchestrator/batching.ts"
export {
  type ApprovalRequest,
  type CallContext,
  MAX_ATTEMPTS,
  Orchestrator,
  RETRY_BACKOFF_MS
} from "./orchestrator/orchestrator.ts"
export {
  defaultOutputSettings,
  InvalidSetting,
  OutputConfig,
  type OutputSettings,
  outputSettingNames
} from "./output/config.ts"
export { makeMemoryStore, OutputStore, type PutRequest, type PutResult, type StoredOutput } from "./output/store.ts"
export { adaptiveTruncate, type Truncated, type TruncateOptions, tailCap } from "./output/truncate.ts"
export { type Provider, providers, type ToolDefinition, toolsParam } from "./registry/provider.ts"
export { DuplicateTool, type RegistryChange, ToolRegistry } from "./registry/registry.ts"
export { coerceArgs } from "./schema/coerce.ts"
export type { JsonSchema, ObjectJsonSchema } from "./schema/json-schema.ts"
export * from "./tool/errors.ts"
export type { ToolCall, ToolResult, ToolStatus } from "./tool/result.ts"
export {
  defineTool,
  type InterruptBehavior,
  type Operation,
  type PermissionCheck,
  type Tool,
  type ToolContext,
  type ToolOutput,
  type ToolSpec,
  type TruncateDirection
} from "./tool/tool.ts"
export { Workspace } from "./tool/workspace.ts"
export { type BuiltinRequirements, builtinTools } from "./tools/index.ts"

/**
 * freecode-tools: the tool layer of a coding agent. The public API: what README.md and docs/*.md
 * show an embedder, and the types of its signatures. Internals (constants, the pieces a service is
 * built from) are imported from their modules by this package's own code and tests, not from here.
 * Serving over MCP is `freecode-tools/mcp` (src/mcp/serving.ts), so that importing the library
 * does not load the MCP SDK's server side.
 */

export { ToolSystem, type ToolSystemOptions } from "../layers/live.ts"
export { AgentFailure, type LoopOptions, type LoopResult, runToolLoop } from "./agent/loop.ts"
export {
  CurrentDispatcher,
  type RunnerOptions,
  type SubagentRequest,
  type SubagentResult,
  SubagentRunner
} from "./agent/runner.ts"
export { dispatcherToolkit } from "./agent/toolkit.ts"
export { type CodeLimits, DEFAULT_LIMITS as DEFAULT_CODE_LIMITS } from "./code/limits.ts"
export { ConfigError, ConfigSource, FreecodeConfig, type FreecodeConfigShape, sectionOf } from "./config/load.ts"
export type { ConfigSection } from "./config/section.ts"
export { Dispatcher, type DispatcherShape, type PermissionMetadata } from "./dispatch/dispatcher.ts"
export { applyEdit, type EditOutcome, type EditRequest } from "./edit/apply.ts"
export { writeFileAtomic } from "./edit/atomic-write.ts"
export { type ReplacerName, replacers } from "./edit/replacers.ts"
export { WriteFs, type WriteFsShape } from "./edit/write-fs.ts"
export {
  type ToolCompleteEvent,
  type ToolEvent,
  ToolEvents,
  type ToolOutputEvent,
  type ToolStartEvent
} from "./events/events.ts"
export { LocalFs, type LocalFsShape } from "./fs/local-fs.ts"
export { MemoryFileSystem } from "./fs/memory.ts"
export { NativeFileSystem, nodeFileSystem } from "./fs/node-fs.ts"
export {
  type FunctionHook,
  type HookInput,
  type HookOutcome,
  type HookResponse,
  Hooks
} from "./hooks/hooks.ts"
export { diagnosticsAfterEditEnabled, errorsAfterEdit } from "./lsp/after-edit.ts"
export { SERVERS, type ServerSpec } from "./lsp/servers.ts"
export { LspClients, type LspDocument, type LspSettings } from "./lsp/service.ts"
export { McpClients, type McpClientsOptions, type McpServerStatus } from "./mcp/clients.ts"
export { loadMcpServers, McpServerConfig, McpServers } from "./mcp/config.ts"
export { convertMcpTool } from "./mcp/convert.ts"
export type { McpPrompt } from "./mcp/resources.ts"
export {
  type ApprovalRequest,
  type CallContext,
  type Catalog,
  type Invocation,
  Orchestrator
} from "./orchestrator/orchestrator.ts"
export { classifyCommand } from "./output/compress/index.ts"
export { OutputConfig, type OutputSettings } from "./output/config.ts"
export {
  type BudgetedHistory,
  HistoryBudget,
  type HistoryBudgetSettings,
  type HistoryResult
} from "./output/history-budget.ts"
export type { OutputView, OutputWriter } from "./output/spill.ts"
export { OutputStore, type PutRequest, type PutResult, type StoredOutput } from "./output/store.ts"
export { layerSqliteOutputStore } from "./output/store-sqlite.ts"
export { Approval, type ApprovalAnswer, type ApprovalQuestion } from "./permission/approval.ts"
export type { PermissionMode, ProfileConfig } from "./permission/config.ts"
export { type Decision, type Grant, PermissionEngine, type Policy } from "./permission/engine.ts"
export { analyzeCommand, type ShellAnalysis, type SimpleCommand } from "./permission/shell.ts"
export { mcpPrompter } from "./prompt/mcp-elicitation.ts"
export {
  type Answer,
  Prompter,
  type PromptOutcome,
  type Question,
  type QuestionOption
} from "./prompt/prompter.ts"
export {
  type FileSnapshot,
  type FileView,
  ReadState,
  type ReadStateShape,
  type ReadWindow
} from "./read-state/read-state.ts"
export {
  compileFor,
  dialectReport,
  type Provider,
  providers,
  type ToolDefinition,
  toolsParam
} from "./registry/provider.ts"
export { DuplicateTool, type RegistryChange, ToolRegistry } from "./registry/registry.ts"
export { type Descriptor, type Launch, openDescriptors } from "./sandbox/launch.ts"
export {
  describeSandbox,
  launchIn,
  Sandbox,
  SandboxByDefault,
  type SandboxPlaces,
  type SandboxShape,
  type SandboxStatus,
  SandboxUnavailable
} from "./sandbox/sandbox.ts"
export { resolveSandboxSettings, type SandboxConfig, type SandboxSettings } from "./sandbox/settings.ts"
export type { JsonSchema, ObjectJsonSchema } from "./schema/json-schema.ts"
export { GrantStore } from "./session/grants.ts"
export { MemoryFolder } from "./session/memory-folder.ts"
export {
  type SessionSettings,
  type SessionSlot,
  Sessions,
  type SessionsShape
} from "./session/sessions.ts"
export {
  SessionPersistence,
  SessionStore,
  SessionStoreError,
  type SessionStoreOptions,
  type SessionStoreShape
} from "./session/store.ts"
export { type Todo, type TodoPriority, type TodoStatus, TodoStore } from "./session/todos.ts"
export { type ModelWiring, type WiringRule, wiringFor } from "./surface/models.ts"
export {
  type DeferStrategy,
  makeSurface,
  type SurfacedDispatcher,
  type SurfaceName,
  type SurfaceOptions,
  surfaced,
  surfaceIn,
  surfaceLayer,
  ToolSurface
} from "./surface/surface.ts"
export * from "./tool/errors.ts"
export type { ToolCall, ToolResult, ToolStatus } from "./tool/result.ts"
export {
  defineTool,
  type InterruptBehavior,
  type Operation,
  type OutputKind,
  type PermissionCheck,
  type Tool,
  type ToolContext,
  type ToolOutput,
  type ToolSpec,
  type TruncateDirection
} from "./tool/tool.ts"
export { Workspace } from "./tool/workspace.ts"
export { CODE_TOOL, type CodeToolOptions, codeLayer } from "./tools/code.ts"
export { type BuiltinRequirements, builtinTools } from "./tools/index.ts"
export { webfetchHost } from "./tools/webfetch.ts"
export { webSearchLayer } from "./tools/websearch.ts"
export { WebNetwork, type WebNetworkShape } from "./web/network.ts"
export { type SearchSetup, searchSetup, webSearchUnavailableReason } from "./web/search/config.ts"
export { SearchProvider, type SearchProviderShape, type SearchResult } from "./web/search/provider.ts"

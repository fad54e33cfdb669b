/** freecode-tools: the tool layer of a coding agent. */

export { AgentFailure, type LoopOptions, type LoopResult, runToolLoop } from "./agent/loop.ts"
export {
  CurrentDispatcher,
  type RunnerOptions,
  SUBAGENT_TYPES,
  type SubagentRequest,
  type SubagentResult,
  SubagentRunner
} from "./agent/runner.ts"
export { dispatcherToolkit, toolkitFrom } from "./agent/toolkit.ts"
export { ConfigError, ConfigSource, FreecodeConfig, type FreecodeConfigShape, sectionOf } from "./config/load.ts"
export type { ConfigSection } from "./config/section.ts"
export { forget as forgetTrustedFolder, isTrusted as isTrustedFolder, trust as trustFolder } from "./config/trust.ts"
export { Dispatcher, type DispatcherShape, type PermissionMetadata } from "./dispatch/dispatcher.ts"
export { applyEdit, applyEditToBytes, type EditOutcome, type EditRequest } from "./edit/apply.ts"
export { writeFileAtomic } from "./edit/atomic-write.ts"
export { type ReplacerName, replacers } from "./edit/replacers.ts"
export { WriteFs, type WriteFsShape } from "./edit/write-fs.ts"
export {
  EVENT_WINDOW_CHARS,
  type ToolCompleteEvent,
  type ToolEvent,
  ToolEvents,
  type ToolOutputEvent,
  type ToolStartEvent
} from "./events/events.ts"
export { LocalFs, type LocalFsShape } from "./fs/local-fs.ts"
export { MemoryFileSystem } from "./fs/memory.ts"
export {
  type FunctionHook,
  type HookInput,
  type HookOutcome,
  type HookResponse,
  Hooks,
  hooksOf
} from "./hooks/hooks.ts"
export { CONFIG_SECTIONS, type FreecodeConfigData, loadConfig, parseConfig } from "./layers/config.ts"
export { ToolSystem, type ToolSystemOptions } from "./layers/live.ts"
export { registerTools, toolSystem } from "./layers/system.ts"
export { diagnosticsAfterEditEnabled, errorsAfterEdit } from "./lsp/after-edit.ts"
export { SERVERS, type ServerSpec } from "./lsp/servers.ts"
export { DEFAULT_LSP_SETTINGS, LspClients, type LspDocument, type LspSettings } from "./lsp/service.ts"
export { McpClients, type McpClientsOptions, type McpServerStatus } from "./mcp/clients.ts"
export { loadMcpServers, McpServerConfig, McpServers } from "./mcp/config.ts"
export { convertMcpTool } from "./mcp/convert.ts"
export { serveHttp, serveStdio } from "./mcp/serve.ts"
export { makeToolServer } from "./mcp/server.ts"
export { planToolBatches, type ToolBatch } from "./orchestrator/batching.ts"
export {
  type ApprovalRequest,
  type CallContext,
  type Catalog,
  type Invocation,
  MAX_ATTEMPTS,
  Orchestrator,
  RETRY_BACKOFF_MS
} from "./orchestrator/orchestrator.ts"
export { classifyCommand, compressForModel, stripAnsi } from "./output/compress/index.ts"
export {
  defaultOutputSettings,
  InvalidSetting,
  OutputConfig,
  type OutputSettings,
  outputSettingNames
} from "./output/config.ts"
export {
  type BudgetedHistory,
  budgetHistory,
  HistoryBudget,
  type HistoryBudgetSettings,
  type HistoryResult
} from "./output/history-budget.ts"
export type { OutputView, OutputWriter } from "./output/spill.ts"
export {
  makeMemoryStore,
  OutputStore,
  type PutRequest,
  type PutResult,
  SPILL_AFTER_BYTES,
  type StoredOutput
} from "./output/store.ts"
export { layerSqliteOutputStore, makeSqliteStore } from "./output/store-sqlite.ts"
export { adaptiveTruncate, type Truncated, type TruncateOptions, tailCap } from "./output/truncate.ts"
export { Approval, type ApprovalAnswer, type ApprovalQuestion } from "./permission/approval.ts"
export type { PermissionMode, ProfileConfig } from "./permission/config.ts"
export { BUILTIN_PROFILES, type Decision, type Grant, PermissionEngine, type Policy } from "./permission/engine.ts"
export { analyzeCommand, type ShellAnalysis, type SimpleCommand } from "./permission/shell.ts"
export { elicitationForm, mcpPrompter } from "./prompt/mcp-elicitation.ts"
export {
  type Answer,
  Prompter,
  type PromptOutcome,
  type Question,
  type QuestionOption
} from "./prompt/prompter.ts"
export {
  DEDUP_POINTER,
  dedupPointer,
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
export {
  describeSandbox,
  Sandbox,
  SandboxByDefault,
  type SandboxPlaces,
  type SandboxShape,
  type SandboxStatus,
  SandboxUnavailable
} from "./sandbox/sandbox.ts"
export { resolveSandboxSettings, type SandboxConfig, type SandboxSettings } from "./sandbox/settings.ts"
export { coerceArgs } from "./schema/coerce.ts"
export {
  type Compiled,
  type CompiledStrict,
  compileAnthropic,
  compileGemini,
  compileOpenAIStrict,
  type DialectChange,
  dropStrictNulls
} from "./schema/dialects/index.ts"
export type { JsonSchema, ObjectJsonSchema } from "./schema/json-schema.ts"
export { resolveSchema } from "./schema/resolve.ts"
export { GrantStore } from "./session/grants.ts"
export { projectStateDir, STATE_DIR_NAME, stateDirConfig } from "./session/location.ts"
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
export {
  DEFAULT_WIRING,
  type EditTool as WiredEditTool,
  type ModelWiring,
  type WiringRule,
  wiringFor
} from "./surface/models.ts"
export { rankTools, selectNames } from "./surface/search.ts"
export {
  AUTO_DEFER_NAME,
  type AutoDeferral,
  CALL_TOOL,
  DEFAULT_AUTO_DEFER_TOKENS,
  DEFAULT_CORE,
  type DeferStrategy,
  makeSurface,
  SEARCH_TOOL,
  SHELL_TOOLS,
  SURFACE_NAMES,
  type SurfacedDispatcher,
  type SurfaceName,
  type SurfaceOptions,
  surfaced,
  surfaceIn,
  surfaceLayer,
  ToolSurface
} from "./surface/surface.ts"
export { countTokens } from "./surface/tokens.ts"
export { hiddenBecause, type Visibility } from "./surface/visibility.ts"
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
export { AgentTool, agentLayer } from "./tools/agent.ts"
export { ApplyPatchTool } from "./tools/apply-patch.ts"
export { BashTool } from "./tools/bash.ts"
export { EditTool } from "./tools/edit.ts"
export { type BuiltinRequirements, builtinTools } from "./tools/index.ts"
export { LspTool } from "./tools/lsp.ts"
export { MemoryTool } from "./tools/memory.ts"
export { QuestionTool } from "./tools/question.ts"
export {
  defaultSkillDirs,
  discoverSkills,
  makeSkillTool,
  SKILL_DIRS_NAME,
  type Skill,
  skillDirsConfig,
  skillLayer
} from "./tools/skill.ts"
export { renderTodos, TodoWriteTool } from "./tools/todowrite.ts"
export { WebFetchTool, webfetchHost } from "./tools/webfetch.ts"
export { WebSearchTool, webSearchLayer } from "./tools/websearch.ts"
export { WriteTool } from "./tools/write.ts"
export { WebNetwork, type WebNetworkShape } from "./web/network.ts"
export { type SearchSetup, searchSetup, webSearchUnavailableReason } from "./web/search/config.ts"
export { SearchProvider, type SearchProviderShape, type SearchResult } from "./web/search/provider.ts"

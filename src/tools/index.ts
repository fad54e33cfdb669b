/**
 * The built-in tools. Adding a tool is one file in this folder and one line in this list
 * (docs/writing-a-tool.md).
 */
import type { FileSystem } from "effect"
import type { WriteFs } from "../edit/write-fs.ts"
import type { LocalFs } from "../fs/local-fs.ts"
import type { LspClients } from "../lsp/service.ts"
import type { OutputStore } from "../output/store.ts"
import type { Prompter } from "../prompt/prompter.ts"
import type { ReadState } from "../read-state/read-state.ts"
import type { MemoryFolder } from "../session/memory-folder.ts"
import type { TodoStore } from "../session/todos.ts"
import type { Tool } from "../tool/tool.ts"
import type { WebNetwork } from "../web/network.ts"
import { ApplyPatchTool } from "./apply-patch.ts"
import { BashTool } from "./bash.ts"
import { EditTool } from "./edit.ts"
import { GlobTool } from "./glob.ts"
import { GrepTool } from "./grep.ts"
import { JobTool } from "./job.ts"
import { LsTool } from "./ls.ts"
import { LspTool } from "./lsp.ts"
import { MemoryTool } from "./memory.ts"
import { OutputTool } from "./output.ts"
import { QuestionTool } from "./question.ts"
import { ReadTool } from "./read.ts"
import { TodoWriteTool } from "./todowrite.ts"
import { WebFetchTool } from "./webfetch.ts"
import { WriteTool } from "./write.ts"

/** Everything a built-in tool may need from its environment. */
export type BuiltinRequirements =
  | FileSystem.FileSystem
  | LocalFs
  | WriteFs
  | OutputStore
  | LspClients
  | ReadState
  | TodoStore
  | MemoryFolder
  | Prompter
  | WebNetwork

export const builtinTools: ReadonlyArray<Tool<BuiltinRequirements>> = [
  ReadTool,
  LsTool,
  GlobTool,
  GrepTool,
  OutputTool,
  LspTool,
  WebFetchTool,
  BashTool,
  JobTool,
  EditTool,
  WriteTool,
  ApplyPatchTool,
  TodoWriteTool,
  MemoryTool,
  QuestionTool
]

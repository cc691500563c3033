/**
 * The assembly: the tools built over one filesystem, behind the default fence, each with its
 * deadline, offered as the backend's capabilities allow. It imports every tool; no tool imports it.
 */
import {
  actingAs,
  SandboxedFileSystem,
  toolCallWrapperOf,
  WRAP_TOOL_CALL,
  type FileSystem,
  type ObservationPolicy,
  type SandboxOptions,
  type ToolCallWrapper,
} from '@seamfs/core'
import { resolveConfig } from './config.js'
import { withDeadline } from './deadline.js'
import { deleteTool, type DeleteValue } from './delete-tool.js'
import { createDirectoryTool, type CreateDirectoryValue } from './directory-tool.js'
import { editTool, type EditValue } from './edit-tool.js'
import { globTool, type GlobValue } from './glob-tool.js'
import { grepTool, type GrepValue } from './grep-tool.js'
import { infoTool, type InfoValue } from './info-tool.js'
import { listTool, type ListValue } from './list-tool.js'
import { moveTool, type MoveValue } from './move-tool.js'
import { readFilesTool, type ReadFilesValue } from './read-files-tool.js'
import { readTool, type ReadValue } from './read-tool.js'
import { fenceOf, listRootsTool, type ListRootsValue } from './roots-tool.js'
import { treeTool, type TreeValue } from './tree-tool.js'
import { NO_CONTEXT } from './tool-kit.js'
import { writeTool, type WriteValue } from './write-tool.js'
import type { FileTool, ToolContext, ToolResult, ToolsConfig } from './types.js'

/** Options of {@link createFileTools}. */
export interface FileToolsOptions {
  readonly fs: FileSystem
  /**
   * The read-before-write policy; omit it (or pass `false`, as the hosts' options take it) to run
   * against the bare backend (unconditional writes and edits). Anything else is a `TypeError` here,
   * not a failure of every later write.
   */
  readonly policy?: ObservationPolicy | false | undefined
  /** Base of relative paths (a call's `context.cwd` overrides it); default the backend's own cwd. */
  readonly cwd?: string | undefined
  readonly config?: Partial<ToolsConfig> | undefined
  /**
   * The fence around `fs`. Default: unless `fs` is fenced already (a `SandboxedFileSystem`, or a
   * layer over one), the tools run through a `SandboxedFileSystem` in `workspace-write` whose root is
   * `cwd` (default the backend's cwd), reads confined to it, with core's protected set: what tools
   * the user runs execute (`.git`, `node_modules`, package-manager config, git repositories by
   * kind, the seamfs code this process runs). The model gets no `../x`, no absolute path outside,
   * no `.git/hooks`. Options here override those defaults (`writableRoots`, `mode`,
   * `confineReads`, `protectedNames`…). `false` hands the model `fs` as it is: an explicit widening,
   * for a backend that is its own fence or a host that fences it itself.
   */
  readonly sandbox?: Partial<SandboxOptions> | false | undefined
}

/** The filesystem the tools run on: `options.fs` behind the default fence (see {@link FileToolsOptions.sandbox}). */
function fencedFs(options: FileToolsOptions): FileSystem {
  const { fs, sandbox } = options
  if (sandbox === false || (sandbox === undefined && fenceOf(fs) !== undefined)) return fs
  return new SandboxedFileSystem(fs, { mode: 'workspace-write', workspaceRoot: options.cwd ?? '.', confineReads: true, ...sandbox })
}

/**
 * The model-facing tools over any backend: plain objects (name, description,
 * JSON Schema, annotations, `execute`) any agent framework can host.
 * `execute(args, { session, signal, cwd })` never throws: failures are
 * `{ isError: true, text: 'Error: …', code }`.
 * A failure carries `retryable` (trying again may help) and, for a mutation whose outcome is not
 * known, `indeterminate: true` (its text says to read before retrying). Every call has a deadline
 * (`config.callTimeoutMs`, default 30 s): a call the store has not answered by then ends
 * with a retryable `FS_IO_ERROR` ("timed out after …") instead of hanging.
 *
 * `execute` accepts exactly what the tool's `inputSchema` declares: an
 * unknown key, a missing required key, a wrong type or a value out of bounds
 * is an input error naming the key (unknown keys are listed with the allowed
 * names). Optional keys are declared `[type, 'null']`: `null` means absent,
 * as hosts in strict mode send it.
 *
 * The tools are `list`, `read`, `write`, `edit`, `glob`, `grep`, `read_files`, `tree`, `info`,
 * `list_roots`, then the ones the backend's capabilities allow: `create_directory`
 * (`capabilities.createDirectory`), `move` (`capabilities.rename`) and `delete`
 * (`capabilities.remove`). A tool the backend cannot serve is left out, so the model is never
 * offered what would only answer `FS_UNSUPPORTED`.
 *
 * Each call returns a new set of tools with its own default session: a call
 * whose context names no `session` records and reads its observations there,
 * so `execute(args)` read → edit works with a policy and no session at all.
 * Two `createFileTools` calls never share it; an explicit `context.session`
 * always wins.
 */
export function createFileTools(options: FileToolsOptions): FileTool[] {
  return Object.values(createFileToolsByName(options)) as FileTool[]
}

/**
 * `tool` with each call run as its session ({@link actingAs}): a change event of an
 * `EventedFileSystem` under the tools names the session (the tool set's own when the call gives none).
 */
function asSession<V>(tool: FileTool<V>, fallback: object): FileTool<V> {
  const execute = (args: unknown, context: ToolContext = NO_CONTEXT): Promise<ToolResult<V>> =>
    actingAs(context.session ?? fallback, () => tool.execute(args, context))
  return Object.freeze({ ...tool, execute })
}

/** The path a call names (`file_path`, `path`, a move's `source_path`), if it names one as a string. */
function pathArgument(args: unknown): string | undefined {
  if (typeof args !== 'object' || args === null) return undefined
  const named = args as Record<string, unknown>
  for (const key of ['file_path', 'path', 'source_path']) if (typeof named[key] === 'string') return named[key]
  return undefined
}

/**
 * `tool` with each call run through `wrapper` (a traced store under the tools: a span per call).
 * The wrapper sees the tool's name and the path the call names, never the rest of its arguments.
 */
function wrapped<V>(tool: FileTool<V>, wrapper: ToolCallWrapper | undefined): FileTool<V> {
  if (wrapper === undefined) return tool
  const execute = (args: unknown, context?: ToolContext): Promise<ToolResult<V>> =>
    wrapper[WRAP_TOOL_CALL]({ tool: tool.name, path: pathArgument(args) }, () => tool.execute(args, context))
  return Object.freeze({ ...tool, execute })
}

/**
 * The tools keyed by name, in the order {@link createFileTools} lists them: what hosts that take a
 * record (the AI SDK's `tools`, MCP registries) want. The optional tools are present only where the
 * backend's capabilities allow them. Same rules and same fresh default session as
 * {@link createFileTools}: one call, one tool set, one session.
 */
export function createFileToolsByName(options: FileToolsOptions): FileToolsByName {
  const session = Object.freeze({ tools: 'default session' })
  const fs = fencedFs(options)
  const deps = { fs, policy: policyOf(options.policy), session, cwd: options.cwd, config: resolveConfig(options.config) }
  const { capabilities } = fs
  const wrapper = toolCallWrapperOf(fs)
  const bound = <V>(tool: FileTool<V>): FileTool<V> => asSession(wrapped(withDeadline(tool, deps.config.callTimeoutMs), wrapper), session)
  // A tool the backend cannot serve is not offered, rather than answering FS_UNSUPPORTED on every call.
  return Object.freeze({
    list: bound(listTool(deps)),
    read: bound(readTool(deps)),
    write: bound(writeTool(deps)),
    edit: bound(editTool(deps)),
    glob: bound(globTool(deps)),
    grep: bound(grepTool(deps)),
    read_files: bound(readFilesTool(deps)),
    tree: bound(treeTool(deps)),
    info: bound(infoTool(deps)),
    list_roots: bound(listRootsTool(deps)),
    ...(capabilities.createDirectory === undefined ? {} : { create_directory: bound(createDirectoryTool(deps)) }),
    ...(capabilities.rename === undefined ? {} : { move: bound(moveTool(deps)) }),
    ...(capabilities.remove === true ? { delete: bound(deleteTool(deps)) } : {}),
  })
}

/** The policy the tools use: `undefined` for none; what is not a policy is refused when the tools are made. */
function policyOf(policy: unknown): ObservationPolicy | undefined {
  if (policy === undefined || policy === false) return undefined
  const methods = ['writeIntent', 'editIntent', 'removeIntent', 'renameIntent', 'recordPresent', 'recordAbsent', 'recordRenamed'] as const
  if (typeof policy !== 'object' || policy === null || methods.some((m) => typeof (policy as Record<string, unknown>)[m] !== 'function')) {
    throw new TypeError(`policy must be an ObservationPolicy, false or omitted; got ${policy === null ? 'null' : typeof policy}`)
  }
  return policy as ObservationPolicy
}

/** The tools of {@link createFileToolsByName}, each typed with its canonical value. */
export interface FileToolsByName {
  readonly list: FileTool<ListValue>
  readonly read: FileTool<ReadValue>
  readonly write: FileTool<WriteValue>
  readonly edit: FileTool<EditValue>
  readonly glob: FileTool<GlobValue>
  readonly grep: FileTool<GrepValue>
  readonly read_files: FileTool<ReadFilesValue>
  readonly tree: FileTool<TreeValue>
  readonly info: FileTool<InfoValue>
  readonly list_roots: FileTool<ListRootsValue>
  /** Where `capabilities.createDirectory` is declared. */
  readonly create_directory?: FileTool<CreateDirectoryValue>
  /** Where `capabilities.rename` is declared. */
  readonly move?: FileTool<MoveValue>
  /** Where `capabilities.remove` is true. */
  readonly delete?: FileTool<DeleteValue>
}

/** The name of a tool {@link createFileTools} can offer. */
export type FileToolName = keyof FileToolsByName

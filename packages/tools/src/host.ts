import { ObservationPolicy, type FsErrorCode, type PolicyOwner } from '@seamfs/core'
import type { FileToolsOptions } from './file-tools.js'
import type { FileTool, ToolResult } from './types.js'

/**
 * What the framework adapters (`@seamfs/ai-sdk`, `@seamfs/langchain`, `@seamfs/deepagents`) take:
 * {@link FileToolsOptions}, safe by default — read-before-write is on unless `policy: false` —
 * plus the session their calls record and read observations in.
 */
export interface HostToolsOptions extends Omit<FileToolsOptions, 'policy'> {
  /**
   * The read-before-write policy. Default: a fresh `ObservationPolicy` (an edit, an overwrite, a
   * move onto a file or a delete needs a read of the current version in the session). `false` runs
   * against the bare backend: writes and edits are unconditional — explicit, never the default.
   */
  readonly policy?: ObservationPolicy | false | undefined
  /**
   * The policy session every call records and reads its observations in. Default: the tool set's
   * own, one per adapter call, so one tool set per agent run is all a host needs. Give one when
   * several tool sets must share a session, or when a tool set outlives a run.
   */
  readonly session?: PolicyOwner | undefined
  /**
   * Append each tool's `prompt` (its usage guidance: which tool to use for what, how to continue a
   * long read…) to the description the framework sends the model, as the MCP server does. Default
   * true: the description is the only text of a tool a model is shown. `false` for a host that
   * briefs the model itself (its system prompt holds each tool's `prompt`).
   */
  readonly includePrompt?: boolean | undefined
}

/** The description a host sends the model for `tool`: its description, then its `prompt` guidance unless `includePrompt` is false. */
export function briefedDescription(tool: Pick<FileTool, 'description' | 'prompt'>, includePrompt: boolean | undefined = true): string {
  const prompt = tool.prompt.trim()
  return includePrompt && prompt !== '' ? `${tool.description}\n\n${prompt}` : tool.description
}

/** The policy a host's tools run with: the given one, a fresh one by default, none only when asked (`false`). */
export function hostPolicy(policy: ObservationPolicy | false | undefined): ObservationPolicy | undefined {
  return policy === false ? undefined : (policy ?? new ObservationPolicy())
}

/**
 * A failed tool call as an exception, for hosts whose tools fail by throwing (the AI SDK's
 * `tool-error`, a LangChain tool invoked with bare arguments). Its message is exactly the tool's
 * text (`Error: … — re-read the file, then retry`), what the model reads.
 */
export class FileToolError extends Error {
  override readonly name = 'FileToolError'
  /** The `FsError` code (`FS_STALE_VERSION`, `FS_NOT_FOUND`, …); undefined for an argument error. */
  readonly code: FsErrorCode | undefined
  /** Whether trying the same call again may help (a network drop, a timeout): the result's `retryable`. */
  readonly retryable: boolean
  /** A failed mutation whose outcome is not known: it may have been made (the result's `indeterminate`). */
  readonly indeterminate: boolean
  /** The failed result as the tool returned it (`isError: true`). */
  readonly result: ToolResult

  constructor(result: ToolResult) {
    super(result.text)
    this.code = result.code
    this.retryable = result.retryable === true
    this.indeterminate = result.indeterminate === true
    this.result = result
  }
}

/**
 * Whether `error` is a {@link FileToolError}: told by its name and shape, not `instanceof`, so it
 * holds across two installed copies of the package.
 */
export function isFileToolError(error: unknown): error is FileToolError {
  return error instanceof Error && error.name === 'FileToolError' && 'result' in error && typeof (error as { result?: unknown }).result === 'object'
}

import type { FileSystem, FsErrorCode, ObservationPolicy, PolicyOwner } from '@seamfs/core'

/** A JSON Schema object, as a tool host expects it. */
export type JsonSchema = Readonly<Record<string, unknown>>

/** Hints for hosts (MCP annotations). */
export interface ToolAnnotations {
  readonly title: string
  readonly readOnlyHint: boolean
  readonly destructiveHint: boolean
  readonly idempotentHint: boolean
  readonly openWorldHint: boolean
}

/** Per call: whose observations count, and the host's cancellation. */
export interface ToolContext {
  /**
   * The session (object or id) the policy keys observations by. Omitted (or
   * `undefined`): the tools instance's default session, one per
   * `createFileTools` call, so a host that never names a session still gets
   * read → edit. Give one per agent when a tools instance serves several.
   */
  readonly session?: PolicyOwner | undefined
  readonly signal?: AbortSignal | undefined
  /** Base of relative paths for this call (a session's cwd); default the tools' cwd. */
  readonly cwd?: string | undefined
}

/** An image a tool returns alongside its text, for multimodal hosts (MCP image content). */
export interface ToolImage {
  /** The image bytes, base64-encoded (standard alphabet, padded). */
  readonly data: string
  /** Detected from the bytes (magic numbers), never from the name. */
  readonly mimeType: 'image/png' | 'image/jpeg' | 'image/gif' | 'image/webp'
}

/** What a tool call returns: the model-facing text, and the canonical value on success. */
export interface ToolResult<V = unknown> {
  readonly text: string
  readonly isError: boolean
  /** The `FsError` code of a failure that had one. */
  readonly code?: FsErrorCode | undefined
  /** `true` for a failure the same call may not meet if tried again (the `FsError`'s `retryable`: a network drop, a timeout); absent otherwise. */
  readonly retryable?: boolean | undefined
  /**
   * A failed mutation whose outcome is not known (the `FsError`'s `indeterminate`): its request
   * went out and the answer was lost, so the change may have been made. The text tells the model to
   * read before retrying. Absent: a failed mutation did not happen.
   */
  readonly indeterminate?: boolean | undefined
  /** The canonical value of a success (see each tool). */
  readonly value?: V | undefined
  /** An image to show the model with `text` (`read` of a PNG, JPEG, GIF or WebP file); a host that cannot show images has the text. */
  readonly image?: ToolImage | undefined
}

/**
 * A tool's structured output, for hosts that take machine-readable results
 * next to the text (MCP `outputSchema` and `structuredContent`).
 *
 * Rules:
 * - `schema` is a JSON Schema object with `type: 'object'` at the root that
 *   every `content(value)` validates against.
 * - `content(value)` is a plain JSON object built from a success's `value`:
 *   no `undefined` members, nothing a JSON round trip would change.
 * - It is bounded as the text is: never a whole file (`write` and `edit` leave
 *   out `before`/`after` and keep the diff the model read).
 * - Failures have no structured content: only the text and the code.
 */
export interface StructuredOutput<V = unknown> {
  readonly schema: JsonSchema
  content(value: V): Record<string, unknown>
}

/** A plain tool object any agent framework can host. `execute` never throws. */
export interface FileTool<V = unknown> {
  readonly name: string
  readonly description: string
  readonly inputSchema: JsonSchema
  readonly annotations: ToolAnnotations
  /** Guidance for the system prompt. */
  readonly prompt: string
  /** The structured form of a success's `value`, with its JSON Schema; every built-in tool has one. */
  readonly structured?: StructuredOutput<V> | undefined
  execute(args: unknown, context?: ToolContext): Promise<ToolResult<V>>
}

/** Caps and defaults; every value a positive integer. */
export interface ToolsConfig {
  readonly listMaxEntries: number
  readonly readLimit: number
  readonly readMaxLineLength: number
  readonly readMaxBytes: number
  readonly readStreamMinSize: number
  /** The largest image file `read` returns as image content, in bytes. */
  readonly readImageMaxBytes: number
  readonly globMaxResults: number
  readonly grepMaxMatches: number
  readonly grepMaxLineBytes: number
  /** Wall-clock budget of one glob or grep, in ms. */
  readonly searchTimeoutMs: number
  /** Listings, link checks and file reads one glob or grep keeps in flight (1: one at a time; at most 64). */
  readonly searchConcurrency: number
  /**
   * The deadline of every tool call, in ms (default 30 000): a call the store has not
   * answered by then ends with a retryable `FS_IO_ERROR` ("timed out after …", flagged
   * `indeterminate` for a mutation that may still land) instead of hanging on a frozen store.
   * Deadlines share one timer per 50 ms, so a call may end up to 50 ms after its deadline.
   */
  readonly callTimeoutMs: number
}

/** What every tool implementation gets. */
export interface ToolDeps {
  readonly fs: FileSystem
  readonly policy: ObservationPolicy | undefined
  /** The session of calls that name none: one object per tools instance. */
  readonly session: PolicyOwner
  readonly cwd: string | undefined
  readonly config: ToolsConfig
}

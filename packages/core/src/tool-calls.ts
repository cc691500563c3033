import type { FileSystem } from './file-system.js'
import { FileSystemLayer } from './layer.js'

/**
 * The key of the method by which a layer wraps each tool call made over it
 * (`@seamfs/core/opentelemetry`'s `TracedFileSystem` opens a span per call there).
 */
export const WRAP_TOOL_CALL: unique symbol = Symbol.for('seamfs.wrapToolCall') as never

/** What a tool call answers, as far as a wrapper may look: never its text. */
export interface ToolCallAnswer {
  readonly isError: boolean
  readonly code?: string | undefined
}

/** What a tool call is, for a wrapper: the tool's name and the path it names, if it names one. */
export interface ToolCall {
  readonly tool: string
  readonly path?: string | undefined
}

/** A layer that wraps the tool calls made over it (see {@link toolCallWrapperOf}). */
export interface ToolCallWrapper {
  [WRAP_TOOL_CALL]<R extends ToolCallAnswer>(call: ToolCall, run: () => Promise<R>): Promise<R>
}

/**
 * The first layer of `fs` (itself, or one under it) that wraps tool calls, if any: the tools
 * (`@seamfs/tools`) run each call through it, so a traced store gets a span per tool call,
 * the parent of the spans of the store calls it makes, whatever fence or layers sit above it.
 */
export function toolCallWrapperOf(fs: FileSystem): ToolCallWrapper | undefined {
  for (let at: FileSystem = fs; ; at = at.inner) {
    if (typeof (at as Partial<ToolCallWrapper>)[WRAP_TOOL_CALL] === 'function') return at as unknown as ToolCallWrapper
    if (!(at instanceof FileSystemLayer)) return undefined
  }
}

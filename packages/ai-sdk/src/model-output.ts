import type { ToolResult } from '@seamfs/tools'

/** What `toModelOutput` returns: the subset of the AI SDK's `ToolResultOutput` these tools use. */
export type FileToolModelOutput =
  | { readonly type: 'text'; readonly value: string }
  | {
      readonly type: 'content'
      readonly value: Array<
        { type: 'text'; text: string } | { type: 'image-data'; data: string; mediaType: string } | { type: 'media'; data: string; mediaType: string }
      >
    }

/** The argument of `toModelOutput`: `{ toolCallId, input, output }` from ai@6 and ai@7; the output itself from ai@5. */
type ModelOutputArg = { readonly output: ToolResult } | ToolResult

const isToolResult = (value: unknown): value is ToolResult =>
  typeof value === 'object' && value !== null && typeof (value as ToolResult).text === 'string' && typeof (value as ToolResult).isError === 'boolean'

/**
 * The tool's text for the model, never the `ToolResult` JSON (whose `value.before`/`after` are
 * whole files). An image (`read` of a PNG, JPEG, GIF or WebP file) goes after the text as media.
 *
 * ai@5 calls `toModelOutput(output)` and knows images only as `media` parts; ai@6 and ai@7 call
 * `toModelOutput({ toolCallId, input, output })` and take `image-data` (ai@6 deprecates `media`,
 * ai@7 dropped it). The shape of the call tells the major, so one tool set serves all three.
 */
export function toModelOutput(arg: ModelOutputArg): FileToolModelOutput {
  const v5 = isToolResult(arg)
  const result = v5 ? arg : arg.output
  if (result.image === undefined) return { type: 'text', value: result.text }
  const { data, mimeType } = result.image
  return {
    type: 'content',
    value: [
      { type: 'text', text: result.text },
      { type: v5 ? 'media' : 'image-data', data, mediaType: mimeType },
    ],
  }
}

/**
 * A seamfs tool call that failed is thrown from a tool's `execute` as `@seamfs/tools`'
 * `FileToolError`, so the AI SDK records it as a `tool-error` part and sends the model
 * `{ type: 'error-text', value: message }`, exactly the tool's text. The application reads
 * `code` and `result` from the part's `error`; `isFileToolError` tells it in a UI stream's
 * `onError`, which the AI SDK otherwise masks as `An error occurred.`:
 * `toUIMessageStreamResponse({ onError: (e) => (isFileToolError(e) ? e.message : 'An error occurred.') })`.
 */
export { FileToolError, isFileToolError } from '@seamfs/tools'

/**
 * A seamfs tool call that failed while the tool was invoked with bare arguments (no tool call, so
 * no `ToolMessage` to carry `status: 'error'`) is thrown as `@seamfs/tools`' `FileToolError`,
 * whose message is the tool's text.
 */
export { FileToolError, isFileToolError } from '@seamfs/tools'

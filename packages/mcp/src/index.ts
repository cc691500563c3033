/**
 * `@seamfs/mcp`: the seamfs file tools as an MCP server over stdio, with
 * `outputSchema` and `structuredContent` per tool. `@seamfs/tools` stays free
 * of the MCP SDK; this package is the only one that depends on it.
 */
import { registerLoadedPackage } from '@seamfs/core'
export {
  createMcpServer,
  DEFAULT_MAX_RESULT_BYTES,
  MCP_CODE_META_KEY,
  MCP_INDETERMINATE_META_KEY,
  MCP_RETRYABLE_META_KEY,
  MCP_STRUCTURED_META_KEY,
  ROOTS_TIMEOUT_MS,
  serveStdio,
  toMcpResult,
  toMcpTool,
  truncateResultText,
  type McpRoot,
  type McpServerOptions,
  type ServeStdioOptions,
  type ToolStructuredOutput,
} from './mcp.js'
export { BoundedStdioTransport, DEFAULT_MAX_MESSAGE_BYTES, INVALID_REQUEST, PARSE_ERROR, type StdioTransportOptions } from './mcp-stdio.js'
export { capStructuredContent, type CappedContent } from './structured-cap.js'

// The code of this package is read-only to the model of any fence in this process (core's loaded-code.ts).
registerLoadedPackage(import.meta.url)

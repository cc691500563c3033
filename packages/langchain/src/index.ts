/**
 * `@seamfs/langchain`: the seamfs file tools as LangChain.js structured tools
 * (`@langchain/core` 1). The model sees each tool's text; failures are `ToolMessage`s with
 * `status: 'error'` and that text.
 */
export { fileTools, type FileLangChainTool, type FileLangChainTools, type FileToolsOptions } from './file-tools.js'
export { FileToolError, isFileToolError } from './errors.js'

/**
 * `@seamfs/langchain`: the seamfs file tools as LangChain.js structured tools
 * (`@langchain/core` 1). The model sees each tool's text; failures are `ToolMessage`s with
 * `status: 'error'` and that text.
 */
import { registerLoadedPackage } from '@seamfs/core'
export { fileTools, type FileLangChainTool, type FileLangChainTools, type FileToolsOptions } from './file-tools.js'
export { FileToolError, isFileToolError } from './errors.js'

// The code of this package is read-only to the model of any fence in this process (core's loaded-code.ts).
registerLoadedPackage(import.meta.url)

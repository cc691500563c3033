/**
 * `@seamfs/ai-sdk`: the seamfs file tools as a Vercel AI SDK (`ai` 5, 6 or 7) tool set.
 * The model sees each tool's text; failures are `tool-error` parts with that text.
 */
import { registerLoadedPackage } from '@seamfs/core'
export { fileToolSet, type FileAiTool, type FileToolInput, type FileToolSet, type FileToolSetOptions } from './file-tool-set.js'
export { FileToolError, isFileToolError } from './errors.js'

// The code of this package is read-only to the model of any fence in this process (core's loaded-code.ts).
registerLoadedPackage(import.meta.url)

/**
 * `@seamfs/ai-sdk`: the seamfs file tools as a Vercel AI SDK (`ai` 5, 6 or 7) tool set.
 * The model sees each tool's text; failures are `tool-error` parts with that text.
 */
export { fileToolSet, type FileAiTool, type FileToolInput, type FileToolSet, type FileToolSetOptions } from './file-tool-set.js'
export { FileToolError, isFileToolError } from './errors.js'

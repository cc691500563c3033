/**
 * `@seamfs/deepagents`: a deepagents backend over any seamfs `FileSystem` (memory, local, S3,
 * SFTP, sandboxed or mounted), with the read-before-write policy and version guards.
 */
import { registerLoadedPackage } from '@seamfs/core'
export { createSeamfsBackend, EMPTY_CONTENT_WARNING, SeamfsBackend } from './seamfs-backend.js'
export { DEFAULT_MAX_TRANSFER_BYTES, type SeamfsBackendOptions } from './options.js'

// The code of this package is read-only to the model of any fence in this process (core's loaded-code.ts).
registerLoadedPackage(import.meta.url)

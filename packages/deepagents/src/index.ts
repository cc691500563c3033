/**
 * `@seamfs/deepagents`: a deepagents backend over any seamfs `FileSystem` (memory, local, S3,
 * SFTP, sandboxed or mounted), with the read-before-write policy and version guards.
 */
export { createSeamfsBackend, EMPTY_CONTENT_WARNING, SeamfsBackend } from './seamfs-backend.js'
export { DEFAULT_MAX_TRANSFER_BYTES, type SeamfsBackendOptions } from './options.js'

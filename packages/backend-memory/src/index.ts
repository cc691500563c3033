export { MemoryFileSystem } from './memory-file-system.js'
export type { MemoryEntry, MemoryFileSystemOptions, MemoryTree } from './options.js'
export { MEMFS_ERROR_TABLE, toFsError } from './errors.js'

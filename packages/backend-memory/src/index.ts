export { MemoryFileSystem } from './memory-file-system.js'
export type { MemoryEntry, MemoryFileSystemOptions, MemoryTree } from './options.js'

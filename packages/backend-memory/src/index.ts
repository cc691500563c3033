import { registerLoadedPackage } from '@seamfs/core'
export { MemoryFileSystem } from './memory-file-system.js'
export type { MemoryEntry, MemoryFileSystemOptions, MemoryTree } from './options.js'

// The code of this package is read-only to the model of any fence in this process (core's loaded-code.ts).
registerLoadedPackage(import.meta.url)

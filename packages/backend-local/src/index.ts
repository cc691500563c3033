import { registerLoadedPackage } from '@seamfs/core'
export { LocalFileSystem } from './local-file-system.js'
export type { LocalFileSystemOptions, LocalHooks } from './options.js'

// The code of this package is read-only to the model of any fence in this process (core's loaded-code.ts).
registerLoadedPackage(import.meta.url)

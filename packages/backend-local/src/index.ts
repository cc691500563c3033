export { LocalFileSystem } from './local-file-system.js'
export type { LocalFileSystemOptions, LocalHooks } from './options.js'

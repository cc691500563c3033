export { LocalFileSystem } from './local-file-system.js'
export type { LocalFileSystemOptions, LocalHooks } from './options.js'
export { ERRNO_TABLE, toFsError } from './errors.js'

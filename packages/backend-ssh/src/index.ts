import { registerLoadedPackage } from '@seamfs/core'
export { SftpFileSystem } from './sftp-file-system.js'
export type { SftpFileSystemOptions } from './options.js'

// The code of this package is read-only to the model of any fence in this process (core's loaded-code.ts).
registerLoadedPackage(import.meta.url)

export { SftpFileSystem } from './sftp-file-system.js'
export type { SftpFileSystemOptions } from './options.js'

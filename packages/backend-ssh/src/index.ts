export { SftpFileSystem } from './sftp-file-system.js'
export type { SftpFileSystemOptions } from './options.js'
export { STATUS_TABLE, toFsError } from './errors.js'
export { sha256Fingerprint } from './connection.js'

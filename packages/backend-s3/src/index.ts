export { S3FileSystem } from './s3-file-system.js'
export type { S3Credentials, S3FileSystemOptions, S3MoveProbeResult, S3ProbeResult } from './options.js'

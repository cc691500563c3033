import { registerLoadedPackage } from '@seamfs/core'
export { S3FileSystem } from './s3-file-system.js'
export type { S3Credentials, S3FileSystemOptions, S3MoveProbeResult, S3ProbeResult } from './options.js'

// The code of this package is read-only to the model of any fence in this process (core's loaded-code.ts).
registerLoadedPackage(import.meta.url)

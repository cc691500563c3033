/** What an `S3FileSystem` declares and the client it builds: pure functions of its options and probe. */
import type { S3ClientConfig } from '@aws-sdk/client-s3'
import type { FsCapabilities } from '@seamfs/core/backend'
import { DEFAULT_CONNECT_TIMEOUT_MS, DEFAULT_IDLE_TIMEOUT_MS, type S3Credentials, type S3FileSystemOptions, type S3ProbeResult } from './options.js'

/** The capabilities for what the probe found (conservative before it has run). */
export function capabilitiesOf(probe: S3ProbeResult | undefined): FsCapabilities {
  return Object.freeze({
    symlinks: false,
    permissions: false,
    processPath: false,
    // Until the probe has run, only the in-process lock is promised.
    createIfAbsent: probe?.createIfAbsent === true ? 'atomic' : 'process',
    // Atomic only where the server also refuses If-Match on a missing key: elsewhere (MinIO and
    // versitygw have let it through) a guarded write could re-create a file deleted meanwhile.
    // (Lock objects need the same conditions, so they never turn a 'process' write guard into 'seamfs'.)
    replaceIfVersion: probe?.replaceIfVersion === true && probe.ifMatchRefusesMissing ? 'atomic' : 'process',
    // An unversioned bucket's ETag of a single PUT is the MD5 of the content: equal content,
    // equal token (a re-created file with the same bytes cannot be told apart). Only a
    // versioned bucket's VersionId names a revision.
    versionSource: probe?.versioned === true ? 'revision' : 'content-hash',
    newlineInNames: true,
    emptyDirectories: false,
    remove: true,
    // A copy has no server-side guard on radosgw, nor a delete on most servers: the guards of
    // remove and rename are checked under the key's lock: its lock object where one can be made
    // (every seamfs writer of the key, in any process, holds it too), else the in-process lock.
    removeIfVersion: probe?.lockObjects === true ? 'seamfs' : 'process',
    // S3 has no rename: a guarded server-side copy (or GET + PUT If-None-Match: *), then a guarded
    // delete of the source. The no-overwrite default has the createIfAbsent strength only where
    // that PUT is used (see Moves.rename and the README), else the lock's (seamfs or process).
    rename: 'copy',
    renameDirectories: false,
    createDirectory: 'marker',
    mtime: true,
    // A prefix LIST without a delimiter: every key below a directory, a request per 1,000 keys.
    listTree: 'native',
  })
}

function credentialsOf(c: S3Credentials): { accessKeyId: string; secretAccessKey: string; sessionToken?: string } {
  const base = { accessKeyId: c.accessKeyId, secretAccessKey: c.secretAccessKey }
  return c.sessionToken === undefined ? base : { ...base, sessionToken: c.sessionToken }
}

/** `idleTimeoutMs`, `connectTimeoutMs` and `maxAttempts`, checked, defaults filled in (`maxAttempts`: the SDK's). */
export interface RequestOptions {
  readonly idleTimeoutMs: number
  readonly connectTimeoutMs: number
  readonly maxAttempts: number | undefined
}

function positiveInteger(value: number | undefined, fallback: number, name: string): number {
  if (value === undefined) return fallback
  if (!Number.isSafeInteger(value) || value < 1) throw new RangeError(`${name} must be a positive integer`)
  return value
}

/** The request options checked (a bad one is a `RangeError`, as for every option), defaults filled in. */
export function requestOptionsOf(o: Readonly<S3FileSystemOptions>): RequestOptions {
  return {
    idleTimeoutMs: positiveInteger(o.idleTimeoutMs, DEFAULT_IDLE_TIMEOUT_MS, 'idleTimeoutMs'),
    connectTimeoutMs: positiveInteger(o.connectTimeoutMs, DEFAULT_CONNECT_TIMEOUT_MS, 'connectTimeoutMs'),
    maxAttempts: o.maxAttempts === undefined ? undefined : positiveInteger(o.maxAttempts, 1, 'maxAttempts'),
  }
}

/**
 * The config of a client built from the options, with the settings S3-compatible servers need
 * and the deadlines: the SDK's Node handler fails a request whose socket is idle for
 * `idleTimeoutMs` (its `socketTimeout`; its `requestTimeout` is a total-time bound that only logs
 * a warning unless told to throw, and is not set) and a connection not made within
 * `connectTimeoutMs` (`connectionTimeout`). Both fail as the SDK's `TimeoutError`.
 */
export function clientConfig(o: Readonly<S3FileSystemOptions>): S3ClientConfig {
  const { idleTimeoutMs, connectTimeoutMs, maxAttempts } = requestOptionsOf(o)
  return {
    region: o.region ?? 'us-east-1',
    ...(o.endpoint === undefined ? {} : { endpoint: o.endpoint }),
    ...(o.forcePathStyle === undefined ? {} : { forcePathStyle: o.forcePathStyle }),
    ...(o.credentials === undefined ? {} : { credentials: credentialsOf(o.credentials) }),
    // The SDK's default (aws-chunked bodies with checksum trailers) is not understood by many
    // S3-compatible servers (RGW 16 answers 411); plain Content-Length bodies work everywhere.
    requestChecksumCalculation: 'WHEN_REQUIRED',
    responseChecksumValidation: 'WHEN_REQUIRED',
    requestHandler: { socketTimeout: idleTimeoutMs, connectionTimeout: connectTimeoutMs },
    ...(maxAttempts === undefined ? {} : { maxAttempts }),
  }
}

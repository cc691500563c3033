import type { S3Client } from '@aws-sdk/client-s3'
import type { FsLimits } from '@seamfs/core'

/** Static credentials for a client this backend builds. */
export interface S3Credentials {
  readonly accessKeyId: string
  readonly secretAccessKey: string
  readonly sessionToken?: string | undefined
}

/**
 * Options of {@link S3FileSystem}; the size limits (`maxTextBytes`, `diffBasisMaxBytes`) are
 * core's. A read or edit of an object above `maxTextBytes` is refused on its GET headers,
 * before its body is downloaded; a write's `before` is read only up to `diffBasisMaxBytes`.
 */
export interface S3FileSystemOptions extends FsLimits {
  /** The bucket holding the filesystem. */
  readonly bucket: string
  /**
   * Key prefix that scopes the whole filesystem (`'tenants/a'` → keys `tenants/a/…`); `/` of
   * the filesystem is this prefix. Nothing resolves outside it. Default: the bucket root.
   */
  readonly prefix?: string | undefined
  /**
   * A pre-built client (its endpoint, credentials, retries, deadlines and checksum settings are
   * used as they are; it is not destroyed by `close()`). Without it, one is built from the options
   * below. Give it deadlines of its own (`requestHandler: { socketTimeout, connectionTimeout }`):
   * the SDK's default has none, and a request to a server that stops answering hangs for good
   * (only a caller's signal ends the wait).
   */
  readonly client?: S3Client | undefined
  /** Endpoint of an S3-compatible server, e.g. `http://127.0.0.1:7480`. Default: AWS. */
  readonly endpoint?: string | undefined
  /** Region (default `us-east-1`). */
  readonly region?: string | undefined
  /** Static credentials. Default: the SDK's provider chain (environment, profile…). */
  readonly credentials?: S3Credentials | undefined
  /** Path-style URLs (`endpoint/bucket/key`), which most self-hosted servers need. Default false. */
  readonly forcePathStyle?: boolean | undefined
  /**
   * How long a request may go without a byte from or to the server, in ms (default 30,000; a
   * positive integer): past it the request fails, with the connection closed. It is an idle
   * deadline, not a total one: a large upload or download that keeps moving is never cut, a server
   * that stops answering mid-request (frozen, or a link that died without a reset) is given up on
   * after this long, also while a GET's body streams. The SDK retries a timed-out request (see
   * `maxAttempts`), so a call may wait up to `maxAttempts` times this (plus backoff); a caller's
   * signal ends the wait at once. A timeout is `FS_IO_ERROR`, retryable, its message saying
   * `timed out after <n> ms`; where the request that timed out was the mutation's own (a PUT,
   * copy or DELETE, not a read before it) and the backend could not check what became of it, the
   * failure is `indeterminate` (see the README, "Deadlines and lost answers"). For a client built
   * here only (the SDK's `socketTimeout`; at or above 6 s the SDK arms it 3 s into the request).
   */
  readonly idleTimeoutMs?: number | undefined
  /**
   * How long making a connection may take, in ms (default 5,000; a positive integer); then the
   * attempt fails (nothing was sent) and is retried as a network failure. For a client built here
   * only (the SDK's `connectionTimeout`).
   */
  readonly connectTimeoutMs?: number | undefined
  /**
   * Attempts per request (the SDK's `maxAttempts`, a positive integer; default the SDK's, 3, or
   * `AWS_MAX_ATTEMPTS`). The SDK's standard retry strategy retries every request, reads and
   * writes alike, after a network failure with no answer (connection reset or refused, broken
   * pipe, a socket timeout of `idleTimeoutMs`, a connect timeout), a 500/502/503/504 or a
   * throttling answer, with jittered exponential backoff (at most 50 ms × 2^n at random, 1 s base
   * when throttled), within a per-client retry budget (a run of failures stops the retries until
   * requests succeed again). A response cut after its headers arrived (a GET's body while it
   * streams) is not retried: the call fails with `FS_IO_ERROR`, retryable. A retried write cannot
   * turn a lost answer into a false outcome: each write carries an operation id, and one whose
   * attempt lost its answer is checked on the key before it reports (see `idleTimeoutMs`). 1
   * turns retries off. For a client built here only.
   */
  readonly maxAttempts?: number | undefined
  /** `MaxKeys` of each `ListObjectsV2` page, 1–1000 (default 1000). */
  readonly pageSize?: number | undefined
  /**
   * Refuse guarded writes (`createIfAbsent`, `replaceIfVersion`, guarded edits), guarded
   * removes and renames with `FS_UNSUPPORTED` when the probes find that the server does not
   * enforce the matching request condition, instead of falling back to an in-process lock.
   * (A rename always needs conditions: on the source's revision, on the destination, and on
   * the DELETE of the source; radosgw 16 enforces no DELETE condition, and the destination's only
   * on a PUT in an unversioned bucket, which a no-overwrite rename up to 64 MiB uses.) Default false.
   */
  readonly requireAtomicGuards?: boolean | undefined
  /** Base of relative paths, inside the filesystem (default `/`, the prefix root). */
  readonly cwd?: string | undefined
  /**
   * How long `resolve` trusts its own check that no file lies on the path to a directory, in ms
   * (default 60,000; 0 checks every time). Within it, resolving another path in that directory
   * costs no request. This instance's own writes, removes and renames forget what they may change
   * at once; another process that puts a file on the path is seen when the time is up. Operations
   * on a target check the store as it is: a create asks again, a read or stat finds nothing there.
   */
  readonly resolveCacheMs?: number | undefined
  /**
   * The lease written into this instance's lock objects, in ms (default 10,000; at least 1,000,
   * at most 120,000): the holder renews it every third of it, and a lock object that was not
   * renewed for longer (its holder was killed on another machine, or froze) is taken over by the
   * next writer. A holder on this machine whose process is gone is taken over at once. Only where
   * lock objects are used (see `S3ProbeResult.lockObjects` and the README).
   */
  readonly lockLeaseMs?: number | undefined
  /**
   * How long an operation waits for a lock object another writer holds, in ms (default 30,000),
   * before it fails with a retryable `FS_IO_ERROR` that names the holder. Nothing waits longer.
   */
  readonly lockWaitMs?: number | undefined
}

export const DEFAULT_PAGE_SIZE = 1000
/** The default of {@link S3FileSystemOptions.idleTimeoutMs}: 30 s. */
export const DEFAULT_IDLE_TIMEOUT_MS = 30_000
/** The default of {@link S3FileSystemOptions.connectTimeoutMs}: 5 s. */
export const DEFAULT_CONNECT_TIMEOUT_MS = 5_000
/** The default of {@link S3FileSystemOptions.resolveCacheMs}: one minute. */
export const DEFAULT_RESOLVE_CACHE_MS = 60_000

/**
 * What the capability probe found out about the server, on a scratch key under the prefix.
 * A condition counts as enforced only when the server refused the write that breaks it
 * (412) and accepted the one that meets it.
 */
export interface S3ProbeResult {
  /** `If-None-Match: *` on an existing key was refused. */
  readonly createIfAbsent: boolean
  /** `If-Match` with a wrong ETag was refused and with the current one accepted. */
  readonly replaceIfVersion: boolean
  /** How `If-Match` must carry the ETag on this server (RGW accepts only the unquoted form). */
  readonly ifMatchForm: 'unquoted' | 'quoted' | null
  /**
   * `If-Match` on a key with no object was refused (412, or AWS's 404), so a PUT `If-Match` alone
   * can never create a file: only then is `replaceIfVersion` without `before` that one PUT.
   */
  readonly ifMatchRefusesMissing: boolean
  /** Writes return a VersionId: the version token includes it. */
  readonly versioned: boolean
  /**
   * Cross-process lock objects can be made here: the server enforces `If-None-Match: *` and
   * `If-Match` on PUT (and refuses `If-Match` on a missing key), the bucket is unversioned, and a
   * PUT in the lock namespace (`/.seamfs-locks/`, at the bucket root) was accepted. Then removes,
   * renames, writes and edits hold the lock object of each key they change (`removeIfVersion:
   * 'seamfs'`); else only the in-process lock (`'process'`).
   */
  readonly lockObjects: boolean
}

/**
 * What the second probe (run on the first `remove` or `rename`) found out about copies and
 * deletes, on scratch keys under the prefix. As for {@link S3ProbeResult}, a condition counts
 * only when the server refused the request that breaks it and accepted the one that meets it.
 */
export interface S3MoveProbeResult {
  /** `If-Match` on DeleteObject with a wrong ETag was refused (radosgw 16 ignores it). */
  readonly deleteIfMatch: boolean
  /**
   * The header that makes CopyObject check the source's ETag: the standard
   * `x-amz-copy-source-if-match` (`'standard'`), radosgw 16's `x-amz-copy-if-match` (`'rgw'`;
   * it ignores the standard one), or none.
   */
  readonly copySourceIfMatch: 'standard' | 'rgw' | null
  /** `If-None-Match: *` on CopyObject onto an existing key was refused. */
  readonly copyIfNoneMatch: boolean
  /** `If-Match` on CopyObject with a wrong destination ETag was refused, and with the right one accepted. */
  readonly copyIfMatch: boolean
}

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
   * A pre-built client (its endpoint, credentials, retries and checksum settings are used as
   * they are; it is not destroyed by `close()`). Without it, one is built from the options below.
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

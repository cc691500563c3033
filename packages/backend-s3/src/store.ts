import type { Readable } from 'node:stream'
import {
  DeleteObjectCommand,
  GetObjectCommand,
  HeadObjectCommand,
  ListObjectsV2Command,
  ListObjectVersionsCommand,
  PutObjectCommand,
  type S3Client,
} from '@aws-sdk/client-s3'
import { FsError, FsVersion } from '@seamfs/core/backend'
import { httpStatusOf } from './errors.js'

/** S3's limit on an object key, in UTF-8 bytes (AWS, radosgw and MinIO alike): no object has a longer key. */
export const MAX_KEY_BYTES = 1024

/** Whether an object could have `key` (or a key that starts with it): not above {@link MAX_KEY_BYTES}. */
export function keyFits(key: string): boolean {
  return key.length <= MAX_KEY_BYTES && Buffer.byteLength(key) <= MAX_KEY_BYTES
}

/** What a HEAD, GET or PUT tells about an object's current revision. */
export interface Revision {
  /** The ETag without quotes. */
  readonly etag: string
  /** The VersionId in a versioned bucket; absent (or the literal `null`) otherwise. */
  readonly versionId?: string | undefined
  readonly size: number
}

/** The version token of a revision: the ETag, plus the VersionId where the bucket has one. */
export function versionOf(rev: Revision): FsVersion {
  return FsVersion(rev.versionId === undefined ? rev.etag : `${rev.etag}#${rev.versionId}`)
}

/** One page of a delimited listing, names relative to the listed prefix. */
export interface ListPage {
  readonly files: readonly { readonly name: string; readonly etag: string | undefined; readonly size: number | undefined }[]
  readonly dirs: readonly string[]
}

/** Request conditions of a PUT, as header values. */
export interface PutConditions {
  readonly ifMatch?: string | undefined
  readonly ifNoneMatch?: '*' | undefined
}

/** A conditional PUT the server refused (412) or failed (409, 5xx) after the client's retries. */
export interface PutConflict {
  readonly ok: false
  readonly status: number
  /** An earlier attempt got no response at all: it may have been applied before the retry. */
  readonly unanswered: boolean
  readonly error: unknown
}

export type PutResult = { readonly ok: true; readonly revision: Revision } | PutConflict

const unquote = (etag: string | undefined): string => (etag ?? '').replace(/^(?:W\/)?"(.*)"$/, '$1')

function revisionOf(out: { ETag?: string | undefined; VersionId?: string | undefined }, size: number): Revision {
  const versionId = out.VersionId === undefined || out.VersionId === 'null' ? undefined : out.VersionId
  return { etag: unquote(out.ETag), versionId, size }
}

/** The SDK's per-request options for `signal` (it takes no `undefined`). */
const aborting = (signal: AbortSignal | undefined): { abortSignal?: AbortSignal } => (signal === undefined ? {} : { abortSignal: signal })

function isMissing(err: unknown): boolean {
  return httpStatusOf(err) === 404
}

/** Keys in a listing sent with `EncodingType: url` (AWS writes a space as `+`). */
function decodeKey(key: string, encoded: boolean, path: string): string {
  if (!encoded) return key
  try {
    return decodeURIComponent(key.replaceAll('+', ' '))
  } catch (err) {
    throw FsError.io('list', path, `the server listed a malformed key "${key}"`, { cause: err })
  }
}

/**
 * The S3 requests this backend makes, one method each, in the store's own terms (absent is
 * `undefined`, a refused condition is a {@link PutConflict}); every other failure is thrown
 * as the SDK raised it, for the caller's single translation table.
 */
export class Store {
  readonly client: S3Client
  readonly bucket: string
  readonly pageSize: number

  constructor(client: S3Client, bucket: string, pageSize: number) {
    this.client = client
    this.bucket = bucket
    this.pageSize = pageSize
  }

  /** HEAD: the object's revision, or undefined when there is no object at `key` (a key above the limit: without asking). */
  async head(key: string, signal?: AbortSignal): Promise<Revision | undefined> {
    if (!keyFits(key)) return undefined
    try {
      const out = await this.client.send(new HeadObjectCommand({ Bucket: this.bucket, Key: key }), aborting(signal))
      return revisionOf(out, out.ContentLength ?? 0)
    } catch (err) {
      if (isMissing(err)) return undefined
      throw err
    }
  }

  /** GET: the revision and the open body stream, or undefined when there is no object (a key above the limit: without asking). */
  async open(key: string, signal?: AbortSignal): Promise<{ revision: Revision; body: Readable } | undefined> {
    if (!keyFits(key)) return undefined
    try {
      const out = await this.client.send(new GetObjectCommand({ Bucket: this.bucket, Key: key }), aborting(signal))
      return { revision: revisionOf(out, out.ContentLength ?? 0), body: out.Body as Readable }
    } catch (err) {
      if (isMissing(err)) return undefined
      throw err
    }
  }

  /** True when at least one key starts with `prefix` (one LIST of one key; none when no key that long can exist). */
  async hasKeysUnder(prefix: string, signal?: AbortSignal): Promise<boolean> {
    if (!keyFits(prefix)) return false
    const out = await this.client.send(new ListObjectsV2Command({ Bucket: this.bucket, Prefix: prefix, MaxKeys: 1 }), aborting(signal))
    return (out.KeyCount ?? out.Contents?.length ?? 0) > 0
  }

  /** The delimited listing of `prefix` (the directory `path`), page by page, following continuation tokens. */
  async *list(prefix: string, path: string, signal?: AbortSignal): AsyncGenerator<ListPage, void, undefined> {
    if (!keyFits(prefix)) return
    let token: string | undefined
    do {
      const out = await this.client.send(
        new ListObjectsV2Command({
          Bucket: this.bucket,
          Prefix: prefix,
          Delimiter: '/',
          MaxKeys: this.pageSize,
          EncodingType: 'url',
          ...(token === undefined ? {} : { ContinuationToken: token }),
        }),
        aborting(signal),
      )
      const encoded = out.EncodingType === 'url'
      const strip = (key: string): string => {
        const decoded = decodeKey(key, encoded, path)
        return decoded.startsWith(prefix) ? decoded.slice(prefix.length) : ''
      }
      yield {
        files: (out.Contents ?? []).map((o) => ({ name: strip(o.Key ?? ''), etag: o.ETag === undefined ? undefined : unquote(o.ETag), size: o.Size })),
        dirs: (out.CommonPrefixes ?? []).map((p) => strip(p.Prefix ?? '').replace(/\/$/, '')),
      }
      token = out.IsTruncated === true ? out.NextContinuationToken : undefined
    } while (token !== undefined)
  }

  /**
   * PUT of a whole object (one request: a single PUT is atomic). With conditions, a 412, 409
   * or 5xx answer is returned as a {@link PutConflict} for the caller to re-check; anything
   * else that fails is thrown.
   */
  async put(key: string, bytes: Uint8Array, conditions?: PutConditions): Promise<PutResult> {
    const command = new PutObjectCommand({
      Bucket: this.bucket,
      Key: key,
      Body: bytes,
      ContentLength: bytes.byteLength,
      ContentType: 'text/plain; charset=utf-8',
      ...(conditions?.ifMatch === undefined ? {} : { IfMatch: conditions.ifMatch }),
      ...(conditions?.ifNoneMatch === undefined ? {} : { IfNoneMatch: conditions.ifNoneMatch }),
    })
    let unanswered = false
    // Runs once per attempt, inside the SDK's retries: notes attempts that got no response.
    command.middlewareStack.add(
      (next) => async (args) => {
        try {
          return await next(args)
        } catch (err) {
          if (httpStatusOf(err) === undefined) unanswered = true
          throw err
        }
      },
      { step: 'deserialize', name: 'seamfsUnansweredAttempts' },
    )
    try {
      const out = await this.client.send(command)
      return { ok: true, revision: revisionOf(out, bytes.byteLength) }
    } catch (err) {
      const status = httpStatusOf(err)
      if (conditions === undefined || status === undefined || !(status === 412 || status === 409 || status >= 500)) throw err
      return { ok: false, status, unanswered, error: err }
    }
  }

  /** Deletes `key` and, in a versioned bucket, every version and delete marker of it. */
  async purge(key: string): Promise<void> {
    const out = await this.client.send(new ListObjectVersionsCommand({ Bucket: this.bucket, Prefix: key }))
    const versions = [...(out.Versions ?? []), ...(out.DeleteMarkers ?? [])].filter((v) => v.Key === key)
    for (const v of versions) {
      await this.client.send(new DeleteObjectCommand({ Bucket: this.bucket, Key: key, ...(v.VersionId === undefined ? {} : { VersionId: v.VersionId }) }))
    }
    if (versions.length === 0) await this.client.send(new DeleteObjectCommand({ Bucket: this.bucket, Key: key }))
  }
}

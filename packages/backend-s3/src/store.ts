import type { Readable } from 'node:stream'
import {
  CopyObjectCommand,
  DeleteObjectCommand,
  DeleteObjectsCommand,
  GetObjectCommand,
  HeadObjectCommand,
  ListObjectsV2Command,
  ListObjectVersionsCommand,
  PutObjectCommand,
  type S3Client,
  type _Object,
} from '@aws-sdk/client-s3'
import { FsError } from '@seamfs/core/backend'
import { readBody } from './body.js'
import { httpStatusOf, noteOutcome, outcomeOf, type Deadlines } from './errors.js'
import { Attempts, conflictOf, lostOrConflict, type Watchable } from './outcomes.js'
import {
  keyFits,
  revisionOf,
  toSecond,
  unquote,
  type CopyConditions,
  type ListedFile,
  type ListPage,
  type ObjectHeaders,
  type PutConditions,
  type PutConflict,
  type PutResult,
  type Revision,
  type StoredObject,
  type VersionEntry,
} from './revisions.js'

/** The non-standard copy-source condition header radosgw reads (it ignores the standard one). */
const RGW_COPY_IF_MATCH = 'x-amz-copy-if-match'

/** `bucket/key` for `x-amz-copy-source`: each key segment percent-encoded, plus `?versionId=` for one revision. */
function copySource(bucket: string, key: string, versionId: string | undefined): string {
  const path = `${bucket}/${key.split('/').map(encodeURIComponent).join('/')}`
  return versionId === undefined ? path : `${path}?versionId=${encodeURIComponent(versionId)}`
}

/** The SDK's per-request options for `signal` (it takes no `undefined`). */
const aborting = (signal: AbortSignal | undefined): { abortSignal?: AbortSignal } => (signal === undefined ? {} : { abortSignal: signal })

function isMissing(err: unknown): boolean {
  return httpStatusOf(err) === 404
}

/** Characters XML 1.0 can carry: a key with any other cannot go in an XML request body (DeleteObjects). */
const XML_CHARS = /^[\t\n\r\u0020-\ud7ff\ue000-\ufffd\u{10000}-\u{10ffff}]*$/u

/** Whether `key` can be written in an XML request body. */
export const xmlCarries = (key: string): boolean => XML_CHARS.test(key)

/** Keys in a listing sent with `EncodingType: url` (AWS writes a space as `+`). */
function decodeKey(key: string, encoded: boolean, path: string): string {
  if (!encoded) return key
  try {
    return decodeURIComponent(key.replaceAll('+', ' '))
  } catch (err) {
    throw FsError.io('list', path, `the server listed a malformed key "${key}"`, { cause: err })
  }
}

/** A PUT's conditions, its Content-Type (`text/plain; charset=utf-8` when not given) and its user metadata. */
export interface PutOptions extends PutConditions {
  readonly contentType?: string | undefined
  readonly metadata?: Readonly<Record<string, string>> | undefined
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
  /** The deadlines of a client this backend built (undefined for an injected client): for the messages of timeouts. */
  readonly deadlines: Deadlines | undefined

  /** `deadlines`: those of a client this backend built, to tell a connect timeout from an idle one. */
  constructor(client: S3Client, bucket: string, pageSize: number, deadlines?: Deadlines) {
    this.client = client
    this.bucket = bucket
    this.pageSize = pageSize
    this.deadlines = deadlines
  }

  /**
   * Runs `send` (which sends `command`), watching its attempts ({@link Attempts}); its error is
   * thrown with the outcome noted on it ({@link noteOutcome}): whether `command` is a `mutation`,
   * and whether an attempt lost its answer. Every request of the store goes through here (a lock
   * object's GET in `leases.ts` does not: its failures are noted there, as a lock's).
   */
  async #sent<T>(command: Watchable, mutation: boolean, send: () => Promise<T>): Promise<T> {
    const attempts = new Attempts(this.deadlines)
    command.middlewareStack.add(attempts.middleware, { step: 'deserialize', priority: 'high', name: 'seamfsAttempts' })
    try {
      return await send()
    } catch (err) {
      throw noteOutcome(err, { mutation, lostAnswer: mutation && attempts.lost })
    }
  }

  /** A read (HEAD, GET, LIST): its failures never leave anything changed. */
  #read<T>(command: Watchable, send: () => Promise<T>): Promise<T> {
    return this.#sent(command, false, send)
  }

  /** HEAD: the object's revision, or undefined when there is no object at `key` (a key above the limit: without asking). */
  async head(key: string, signal?: AbortSignal): Promise<Revision | undefined> {
    if (!keyFits(key)) return undefined
    try {
      const command = new HeadObjectCommand({ Bucket: this.bucket, Key: key })
      const out = await this.#read(command, () => this.client.send(command, aborting(signal)))
      return revisionOf(out, out.ContentLength ?? 0, out)
    } catch (err) {
      if (isMissing(err)) return undefined
      throw err
    }
  }

  /** GET: the revision and the open body stream, or undefined when there is no object (a key above the limit: without asking). */
  async open(key: string, signal?: AbortSignal): Promise<{ revision: Revision; body: Readable } | undefined> {
    if (!keyFits(key)) return undefined
    try {
      const command = new GetObjectCommand({ Bucket: this.bucket, Key: key })
      const out = await this.#read(command, () => this.client.send(command, aborting(signal)))
      return { revision: revisionOf(out, out.ContentLength ?? 0, out), body: out.Body as Readable }
    } catch (err) {
      if (isMissing(err)) return undefined
      throw err
    }
  }

  /**
   * GET of a whole object of at most `maxBytes` (a larger one is released unread: `'too large'`),
   * with its Content-Type and user metadata, or undefined when there is no object.
   */
  async getBytes(key: string, maxBytes: number, path: string): Promise<StoredObject | 'too large' | undefined> {
    if (!keyFits(key)) return undefined
    try {
      const command = new GetObjectCommand({ Bucket: this.bucket, Key: key })
      const out = await this.#read(command, () => this.client.send(command))
      const revision = revisionOf(out, out.ContentLength ?? 0, out)
      const bytes = await readBody(out.Body as Readable, revision.size, { verb: 'rename', path, signal: undefined }, () => revision.size <= maxBytes)
      if (bytes === null) return 'too large'
      return { revision, bytes, contentType: out.ContentType, metadata: out.Metadata }
    } catch (err) {
      if (isMissing(err)) return undefined
      throw err
    }
  }

  /**
   * The newest two entries (versions or delete markers) of exactly `key`, from one LIST of
   * versions: the current one (`latest`) and the one below it, if any.
   */
  async topVersions(key: string): Promise<{ readonly latest: VersionEntry | undefined; readonly below: VersionEntry | undefined }> {
    const command = new ListObjectVersionsCommand({ Bucket: this.bucket, Prefix: key, MaxKeys: 2, EncodingType: 'url' })
    const out = await this.#read(command, () => this.client.send(command))
    const listed = (k: string | undefined): string => decodeKey(k ?? '', out.EncodingType === 'url', key)
    const entries = [
      ...(out.Versions ?? []).map((v) => ({ versionId: v.VersionId, marker: false, latest: v.IsLatest === true, key: listed(v.Key) })),
      ...(out.DeleteMarkers ?? []).map((v) => ({ versionId: v.VersionId, marker: true, latest: v.IsLatest === true, key: listed(v.Key) })),
    ].filter((v) => v.key === key)
    const pick = (e: (typeof entries)[number] | undefined): VersionEntry | undefined =>
      e === undefined ? undefined : { versionId: e.versionId === 'null' ? undefined : e.versionId, marker: e.marker }
    return { latest: pick(entries.find((e) => e.latest)), below: pick(entries.find((e) => !e.latest)) }
  }

  /** True when at least one key starts with `prefix` (one LIST of one key; none when no key that long can exist). */
  async hasKeysUnder(prefix: string, signal?: AbortSignal): Promise<boolean> {
    return (await this.firstUnder(prefix, signal)) !== undefined
  }

  /** The first key that starts with `prefix` and its Last-Modified (whole seconds), or undefined when there is none (one LIST of one key). */
  async firstUnder(prefix: string, signal?: AbortSignal): Promise<{ readonly key: string; readonly lastModified: number | undefined } | undefined> {
    if (!keyFits(prefix)) return undefined
    const command = new ListObjectsV2Command({ Bucket: this.bucket, Prefix: prefix, MaxKeys: 1, EncodingType: 'url' })
    const out = await this.#read(command, () => this.client.send(command, aborting(signal)))
    const first = out.Contents?.[0]
    if (first === undefined) return undefined
    return { key: decodeKey(first.Key ?? '', out.EncodingType === 'url', prefix), lastModified: toSecond(first.LastModified) }
  }

  /** The delimited listing of `prefix` (the directory `path`), page by page, following continuation tokens. */
  async *list(prefix: string, path: string, signal?: AbortSignal): AsyncGenerator<ListPage, void, undefined> {
    if (!keyFits(prefix)) return
    let token: string | undefined
    do {
      const command = new ListObjectsV2Command({
        Bucket: this.bucket,
        Prefix: prefix,
        Delimiter: '/',
        MaxKeys: this.pageSize,
        EncodingType: 'url',
        ...(token === undefined ? {} : { ContinuationToken: token }),
      })
      const out = await this.#read(command, () => this.client.send(command, aborting(signal)))
      const encoded = out.EncodingType === 'url'
      const strip = (key: string): string => {
        const decoded = decodeKey(key, encoded, path)
        return decoded.startsWith(prefix) ? decoded.slice(prefix.length) : ''
      }
      yield {
        files: (out.Contents ?? []).map((o) => ({
          name: strip(o.Key ?? ''),
          etag: o.ETag === undefined ? undefined : unquote(o.ETag),
          size: o.Size,
          lastModified: toSecond(o.LastModified),
        })),
        dirs: (out.CommonPrefixes ?? []).map((p) => strip(p.Prefix ?? '').replace(/\/$/, '')),
      }
      token = out.IsTruncated === true ? out.NextContinuationToken : undefined
    } while (token !== undefined)
  }

  /**
   * PUT of a whole object (one request: a single PUT is atomic). With conditions (`ifMatch`,
   * `ifNoneMatch` of `options`), a 412, 409 or 5xx answer is returned as a {@link PutConflict} for the caller to re-check; so is, with or
   * without conditions, a failure after an attempt that lost its answer (`unanswered`: the PUT may
   * have been applied, which only the key can tell). Anything else that fails is thrown: nothing
   * was written.
   */
  async put(key: string, bytes: Uint8Array, options: PutOptions = {}): Promise<PutResult> {
    const { ifMatch, ifNoneMatch, contentType = 'text/plain; charset=utf-8', metadata } = options
    const command = new PutObjectCommand({
      Bucket: this.bucket,
      Key: key,
      Body: bytes,
      ContentLength: bytes.byteLength,
      ContentType: contentType,
      ...(metadata === undefined ? {} : { Metadata: { ...metadata } }),
      ...(ifMatch === undefined ? {} : { IfMatch: ifMatch }),
      ...(ifNoneMatch === undefined ? {} : { IfNoneMatch: ifNoneMatch }),
    })
    try {
      const out = await this.#sent(command, true, () => this.client.send(command))
      return { ok: true, revision: revisionOf(out, bytes.byteLength) }
    } catch (err) {
      return lostOrConflict(err, ifMatch !== undefined || ifNoneMatch !== undefined, ifMatch !== undefined)
    }
  }

  /**
   * Server-side copy of `source` (the exact revision `versionId` where given) to `key`. With
   * conditions, a 412, 409 or 5xx answer is a {@link PutConflict}, and so is any failure after an
   * attempt that lost its answer (as for {@link put}); a missing source is thrown (404). `size` is the source's, for the returned revision. With `replace`, the copy gets these
   * headers and user metadata instead of the source's (`MetadataDirective: REPLACE`).
   */
  async copy(
    source: { readonly key: string; readonly versionId?: string | undefined; readonly size: number },
    key: string,
    conditions: CopyConditions = {},
    replace?: ObjectHeaders,
  ): Promise<PutResult> {
    const { sourceIfMatch, ifMatch, ifNoneMatch } = conditions
    const command = new CopyObjectCommand({
      Bucket: this.bucket,
      Key: key,
      CopySource: copySource(this.bucket, source.key, source.versionId),
      ...(replace === undefined
        ? {}
        : {
            MetadataDirective: 'REPLACE',
            Metadata: { ...replace.metadata },
            ...(replace.contentType === undefined ? {} : { ContentType: replace.contentType }),
            ...(replace.cacheControl === undefined ? {} : { CacheControl: replace.cacheControl }),
            ...(replace.contentDisposition === undefined ? {} : { ContentDisposition: replace.contentDisposition }),
            ...(replace.contentEncoding === undefined ? {} : { ContentEncoding: replace.contentEncoding }),
            ...(replace.contentLanguage === undefined ? {} : { ContentLanguage: replace.contentLanguage }),
          }),
      ...(sourceIfMatch?.header === 'standard' ? { CopySourceIfMatch: sourceIfMatch.etag } : {}),
      ...(ifMatch === undefined ? {} : { IfMatch: ifMatch }),
      ...(ifNoneMatch === undefined ? {} : { IfNoneMatch: ifNoneMatch }),
    })
    if (sourceIfMatch?.header === 'rgw') {
      command.middlewareStack.add(
        (next) => async (args) => {
          const request = args.request as { headers?: Record<string, string> }
          if (request.headers !== undefined) request.headers[RGW_COPY_IF_MATCH] = sourceIfMatch.etag
          return next(args)
        },
        { step: 'build', name: 'seamfsRgwCopyIfMatch' },
      )
    }
    try {
      const out = await this.#sent(command, true, () => this.client.send(command))
      return {
        ok: true,
        revision: revisionOf({ ETag: out.CopyObjectResult?.ETag, VersionId: out.VersionId, LastModified: out.CopyObjectResult?.LastModified }, source.size),
      }
    } catch (err) {
      return lostOrConflict(err, sourceIfMatch !== undefined || ifMatch !== undefined || ifNoneMatch !== undefined, false)
    }
  }

  /**
   * DELETE of `key` (in a versioned bucket: a delete marker on top; with `versionId`: that one
   * version, for good, and nothing else). With `ifMatch`, a refusal (412; 404 where the key is
   * gone) is a {@link PutConflict}; a server that ignores the condition deletes anyway, which
   * only the probe can tell. A failure whose answer may have been lost is thrown with that noted
   * on it ({@link outcomeOf}): the DELETE may have been applied.
   */
  async remove(key: string, ifMatch?: string, versionId?: string): Promise<{ readonly ok: true } | PutConflict> {
    const command = new DeleteObjectCommand({
      Bucket: this.bucket,
      Key: key,
      ...(ifMatch === undefined ? {} : { IfMatch: ifMatch }),
      ...(versionId === undefined ? {} : { VersionId: versionId }),
    })
    try {
      await this.#sent(command, true, () => this.client.send(command))
      return { ok: true }
    } catch (err) {
      const unanswered = outcomeOf(err)?.lostAnswer === true
      if (ifMatch !== undefined && isMissing(err)) return { ok: false, status: 404, unanswered, error: err }
      return conflictOf(err, ifMatch !== undefined, unanswered)
    }
  }

  /**
   * Deletes `keys` with DeleteObjects, up to 1,000 per request, in order; a key the server did not
   * delete is an error. A key that XML 1.0 cannot carry (a control character, U+FFFE, U+FFFF) cannot
   * go in DeleteObjects' XML body: it is deleted on its own, with a DELETE of its URL.
   */
  async removeAll(keys: readonly string[]): Promise<void> {
    let batch: string[] = []
    const flush = async (): Promise<void> => {
      if (batch.length === 0) return
      const Objects = batch.map((Key) => ({ Key }))
      batch = []
      const command = new DeleteObjectsCommand({ Bucket: this.bucket, Delete: { Objects, Quiet: true } })
      const out = await this.#sent(command, true, () => this.client.send(command))
      const failed = out.Errors ?? []
      if (failed.length > 0) {
        const err = Object.assign(new Error(`${failed.length} keys were not deleted (first: ${failed[0]?.Code ?? '?'})`), { code: failed[0]?.Code })
        // The server answered: the keys it names were not deleted (the others were).
        throw noteOutcome(err, { mutation: true, lostAnswer: false })
      }
    }
    for (const key of keys) {
      if (xmlCarries(key)) {
        batch.push(key)
        if (batch.length === 1000) await flush()
        continue
      }
      await flush()
      const command = new DeleteObjectCommand({ Bucket: this.bucket, Key: key })
      await this.#sent(command, true, () => this.client.send(command))
    }
    await flush()
  }

  /** The first `count` keys that start with `prefix`, in key order (one LIST). */
  async firstKeys(prefix: string, count: number, signal?: AbortSignal): Promise<string[]> {
    if (!keyFits(prefix)) return []
    const command = new ListObjectsV2Command({ Bucket: this.bucket, Prefix: prefix, MaxKeys: count, EncodingType: 'url' })
    const out = await this.#read(command, () => this.client.send(command, aborting(signal)))
    const encoded = out.EncodingType === 'url'
    return (out.Contents ?? []).map((o) => decodeKey(o.Key ?? '', encoded, prefix))
  }

  /** Every key that starts with `prefix`, page by page (no delimiter: the whole tree). */
  async *keysUnder(prefix: string, signal?: AbortSignal): AsyncGenerator<string[], void, undefined> {
    for await (const page of this.#pagesUnder(prefix, prefix, signal)) yield page.map((o) => o.key)
  }

  /**
   * Every object below `prefix` (the directory `path`), named relative to it, page by page in key
   * order: the listing without a delimiter, a request per page whatever the depth.
   */
  async *objectsUnder(prefix: string, path: string, signal?: AbortSignal): AsyncGenerator<ListedFile[], void, undefined> {
    for await (const page of this.#pagesUnder(prefix, path, signal)) {
      yield page.map(({ key, o }) => ({
        name: key.slice(prefix.length),
        etag: o.ETag === undefined ? undefined : unquote(o.ETag),
        size: o.Size,
        lastModified: toSecond(o.LastModified),
      }))
    }
  }

  /** The LIST pages without a delimiter below `prefix`: each object with its decoded key (`path` names a bad one). */
  async *#pagesUnder(prefix: string, path: string, signal: AbortSignal | undefined): AsyncGenerator<{ key: string; o: _Object }[], void, undefined> {
    if (!keyFits(prefix)) return
    let token: string | undefined
    do {
      const command = new ListObjectsV2Command({
        Bucket: this.bucket,
        Prefix: prefix,
        MaxKeys: this.pageSize,
        EncodingType: 'url',
        ...(token === undefined ? {} : { ContinuationToken: token }),
      })
      const out = await this.#read(command, () => this.client.send(command, aborting(signal)))
      const encoded = out.EncodingType === 'url'
      yield (out.Contents ?? []).map((o) => ({ key: decodeKey(o.Key ?? '', encoded, path), o })).filter(({ key }) => key.startsWith(prefix))
      token = out.IsTruncated === true ? out.NextContinuationToken : undefined
    } while (token !== undefined)
  }

  /** Deletes `key` and, in a versioned bucket, every version and delete marker of it. */
  async purge(key: string): Promise<void> {
    const command = new ListObjectVersionsCommand({ Bucket: this.bucket, Prefix: key, EncodingType: 'url' })
    const out = await this.#read(command, () => this.client.send(command))
    const encoded = out.EncodingType === 'url'
    const versions = [...(out.Versions ?? []), ...(out.DeleteMarkers ?? [])].filter((v) => decodeKey(v.Key ?? '', encoded, key) === key)
    for (const v of versions) await this.#purgeOne(key, v.VersionId)
    if (versions.length === 0) await this.#purgeOne(key, undefined)
  }

  async #purgeOne(key: string, versionId: string | undefined): Promise<void> {
    const command = new DeleteObjectCommand({ Bucket: this.bucket, Key: key, ...(versionId === undefined ? {} : { VersionId: versionId }) })
    await this.#sent(command, true, () => this.client.send(command))
  }
}

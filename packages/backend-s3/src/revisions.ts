/** The store's terms: object keys, revisions and their versions, operation ids, and the outcomes of conditional requests. */
import { randomBytes } from 'node:crypto'
import { FsVersion } from '@seamfs/core/backend'

/** S3's limit on an object key, in UTF-8 bytes (AWS, radosgw and MinIO alike): no object has a longer key. */
export const MAX_KEY_BYTES = 1024

/** Whether an object could have `key` (or a key that starts with it): not above {@link MAX_KEY_BYTES}. */
export function keyFits(key: string): boolean {
  return key.length <= MAX_KEY_BYTES && Buffer.byteLength(key) <= MAX_KEY_BYTES
}

/**
 * The user-metadata key (`x-amz-meta-seamfs-op`) carrying the id of the operation that wrote an
 * object (a write, an edit, a rename's copy). It is what proves an object is one's own: a cleanup
 * deletes, or an answer-less write counts as done, only an object carrying its own operation's id,
 * never one recognised by its ETag (content hash), which two writers of the same bytes share.
 */
export const OP_ID_META = 'seamfs-op'

/** A fresh operation id (96 random bits, hex), for {@link OP_ID_META}. */
export const newOpId = (): string => randomBytes(12).toString('hex')

/** The headers an object keeps through a copy that replaces its metadata (to give it a new {@link OP_ID_META}). */
export interface ObjectHeaders {
  readonly contentType?: string | undefined
  readonly metadata?: Readonly<Record<string, string>> | undefined
  readonly cacheControl?: string | undefined
  readonly contentDisposition?: string | undefined
  readonly contentEncoding?: string | undefined
  readonly contentLanguage?: string | undefined
}

/** What a HEAD, GET or PUT tells about an object's current revision. */
export interface Revision {
  /** The ETag without quotes. */
  readonly etag: string
  /** The VersionId in a versioned bucket; absent (or the literal `null`) otherwise. */
  readonly versionId?: string | undefined
  readonly size: number
  /** Last-Modified in ms since the epoch, where the answer carried it. */
  readonly lastModified?: number | undefined
  /** The object's headers, from a HEAD or GET (not from a PUT, a copy or a listing). */
  readonly headers?: ObjectHeaders | undefined
}

/** The version token of a revision: the ETag, plus the VersionId where the bucket has one. */
export function versionOf(rev: Revision): FsVersion {
  return FsVersion(rev.versionId === undefined ? rev.etag : `${rev.etag}#${rev.versionId}`)
}

/** A whole object read by `Store.getBytes`. */
export interface StoredObject {
  readonly revision: Revision
  readonly bytes: Uint8Array
  readonly contentType: string | undefined
  readonly metadata: Readonly<Record<string, string>> | undefined
}

/** An entry of a key's version history: a version or a delete marker. */
export interface VersionEntry {
  readonly versionId: string | undefined
  readonly marker: boolean
}

/** One page of a delimited listing, names relative to the listed prefix. */
export interface ListPage {
  readonly files: readonly ListedFile[]
  readonly dirs: readonly string[]
}

/** An object of a listing page, named relative to the listed prefix. */
export interface ListedFile {
  readonly name: string
  readonly etag: string | undefined
  readonly size: number | undefined
  readonly lastModified: number | undefined
}

/** Request conditions of a PUT, as header values. */
export interface PutConditions {
  readonly ifMatch?: string | undefined
  readonly ifNoneMatch?: '*' | undefined
}

/**
 * A conditional PUT (or copy) the server refused (412) or failed (409, 5xx), or any PUT or copy one
 * of whose attempts lost its answer (`unanswered`), after the client's retries.
 */
export interface PutConflict {
  readonly ok: false
  /** The HTTP status of the last attempt; 0 when it got no answer. */
  readonly status: number
  /**
   * An attempt may have reached the server and its answer was lost (the connection failed with the
   * request in flight, the socket went idle): it may have been applied, before a retry too. Only a
   * look at the key (its operation id, {@link OP_ID_META}) can tell.
   */
  readonly unanswered: boolean
  readonly error: unknown
}

export type PutResult = { readonly ok: true; readonly revision: Revision } | PutConflict

/** Conditions of a CopyObject: on the source revision, and on the destination (as for a PUT). */
export interface CopyConditions extends PutConditions {
  /**
   * The source's ETag must match, sent in the header the server reads: `standard`
   * (`x-amz-copy-source-if-match`, AWS) or `rgw` (`x-amz-copy-if-match`, what radosgw 16 reads).
   */
  readonly sourceIfMatch?: { readonly header: 'standard' | 'rgw'; readonly etag: string } | undefined
}

export const unquote = (etag: string | undefined): string => (etag ?? '').replace(/^(?:W\/)?"(.*)"$/, '$1')

/** Whole seconds: HEAD's Last-Modified has no more, so a listing's milliseconds are cut to agree with `stat`. */
export const toSecond = (date: Date | undefined): number | undefined => {
  const ms = date?.getTime()
  return ms === undefined || Number.isNaN(ms) ? undefined : Math.floor(ms / 1000) * 1000
}

interface RevisionFields {
  ETag?: string | undefined
  VersionId?: string | undefined
  LastModified?: Date | undefined
}

interface HeaderFields {
  ContentType?: string | undefined
  Metadata?: Record<string, string> | undefined
  CacheControl?: string | undefined
  ContentDisposition?: string | undefined
  ContentEncoding?: string | undefined
  ContentLanguage?: string | undefined
}

export function revisionOf(out: RevisionFields, size: number, h?: HeaderFields): Revision {
  const versionId = out.VersionId === undefined || out.VersionId === 'null' ? undefined : out.VersionId
  const lastModified = toSecond(out.LastModified)
  const headers: ObjectHeaders | undefined = h && {
    contentType: h.ContentType,
    metadata: h.Metadata,
    cacheControl: h.CacheControl,
    contentDisposition: h.ContentDisposition,
    contentEncoding: h.ContentEncoding,
    contentLanguage: h.ContentLanguage,
  }
  return { etag: unquote(out.ETag), versionId, size, ...(lastModified === undefined ? {} : { lastModified }), ...(headers === undefined ? {} : { headers }) }
}

/** The operation id an object carries ({@link OP_ID_META}), from a HEAD or GET. */
export const opIdOf = (revision: Revision | undefined): string | undefined => revision?.headers?.metadata?.[OP_ID_META]

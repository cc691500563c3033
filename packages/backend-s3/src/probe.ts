import { randomUUID } from 'node:crypto'
import { FsError } from '@seamfs/core/backend'
import { probeLockNamespace } from './leases.js'
import type { S3MoveProbeResult, S3ProbeResult } from './options.js'
import type { Store } from './store.js'
import type { CopyConditions, PutConflict, PutResult } from './revisions.js'

const BODY = new TextEncoder().encode('seamfs capability probe\n')
const WRONG_ETAG = '0123456789abcdef0123456789abcdef'

/**
 * The scratch key of a probe: under the prefix, behind an empty path segment
 * (`prefix + '/.seamfs-probe/<uuid>'`). No path resolves to it (`//` collapses) and
 * listings skip empty names, so it is never visible, even while it exists.
 */
export function scratchKey(prefix: string): string {
  return `${prefix}/.seamfs-probe/${randomUUID()}`
}

/**
 * A conditional PUT's answer: 200 is true; 412 (refused) and 501 (conditions not implemented)
 * are false; anything else (a 5xx, or an answer lost: a refusal may then be of its own earlier
 * attempt) makes the probe fail, to be tried again on next use.
 */
function accepted(result: PutResult | { readonly ok: true } | PutConflict, request = 'PUT'): boolean {
  if (result.ok) return true
  if (result.unanswered) throw result.error
  if (result.status === 412 || result.status === 501) return false
  throw FsError.io('write', '/', `capability probe: the server answered ${result.status} to a conditional ${request}`, {
    cause: result.error,
    retryable: true,
  })
}

/**
 * Whether the server refuses `If-Match` on a key that has no object (412; AWS answers 404).
 * Some let it through and create the object (MinIO before minio/minio#21526, versitygw before
 * versity/versitygw#1709); such an object is deleted again.
 */
async function refusesIfMatchOnMissing(store: Store, key: string, ifMatch: string): Promise<boolean> {
  const put = await store.put(key, BODY, { ifMatch })
  if (!put.ok && put.status === 404) return true
  if (!accepted(put)) return true
  await store.purge(key)
  return false
}

/**
 * Finds out, on a scratch key, whether the server enforces `If-None-Match: *` and `If-Match`
 * on PUT, in which form `If-Match` must carry the ETag, and whether it refuses `If-Match` on a
 * missing key; then deletes every version of the scratch key. Where all hold in an unversioned
 * bucket, whether a lock object can be made (`lockObjects`: one PUT and one DELETE of a scratch
 * lock object). 5 to 9 PUTs, 1 LIST of versions and 1 to 4 DELETEs (more where an `If-Match` PUT on
 * a missing key created one).
 */
export async function probeConditions(store: Store, key: string): Promise<S3ProbeResult> {
  try {
    const created = await store.put(key, BODY, { ifNoneMatch: '*' })
    if (!created.ok) {
      accepted(created)
      // Refused on a fresh random key: the server rejects the condition itself; trust none.
      return { createIfAbsent: false, replaceIfVersion: false, ifMatchForm: null, ifMatchRefusesMissing: false, versioned: false, lockObjects: false }
    }
    const versioned = created.revision.versionId !== undefined
    const createIfAbsent = !accepted(await store.put(key, BODY, { ifNoneMatch: '*' }))
    // Same body every time, so the current ETag is known whatever the server did.
    const etag = created.revision.etag
    let ifMatchForm: S3ProbeResult['ifMatchForm'] = null
    for (const form of ['unquoted', 'quoted'] as const) {
      const quote = (e: string): string => (form === 'quoted' ? `"${e}"` : e)
      if (accepted(await store.put(key, BODY, { ifMatch: quote(WRONG_ETAG) }))) break
      if (accepted(await store.put(key, BODY, { ifMatch: quote(etag) }))) {
        ifMatchForm = form
        break
      }
    }
    const quote = (e: string): string => (ifMatchForm === 'quoted' ? `"${e}"` : e)
    const ifMatchRefusesMissing = ifMatchForm !== null && (await refusesIfMatchOnMissing(store, `${key}.absent`, quote(WRONG_ETAG)))
    // Lock objects need both conditions (create, renew, take over) and an unversioned bucket (no history of every lock).
    const lockObjects = createIfAbsent && ifMatchRefusesMissing && !versioned && (await probeLockNamespace(store))
    return { createIfAbsent, replaceIfVersion: ifMatchForm !== null, ifMatchForm, ifMatchRefusesMissing, versioned, lockObjects }
  } finally {
    // A scratch key left behind is invisible (see scratchKey); a failed cleanup is not a failed probe.
    await store.purge(key).catch(() => undefined)
  }
}

/**
 * The second probe, run on the first `remove` or `rename`: on a scratch key and a copy of it,
 * whether CopyObject checks the source's ETag (and through which header), whether it honours
 * `If-None-Match: *` and `If-Match` on the destination, and whether DeleteObject honours
 * `If-Match`; then deletes every version of both keys. On radosgw 16: 1 PUT, 5 COPY, 1 DELETE,
 * then the cleanup (2 LIST-VERSIONS, 2 DELETE).
 */
export async function probeMoves(store: Store, key: string, ifMatchForm: S3ProbeResult['ifMatchForm']): Promise<S3MoveProbeResult> {
  const copyKey = `${key}.copy`
  const quote = (e: string): string => (ifMatchForm === 'quoted' ? `"${e}"` : e)
  try {
    const created = await store.put(key, BODY)
    if (!created.ok) throw created.error
    const { etag, size } = created.revision
    const source = { key, size }
    const copy = async (conditions: CopyConditions): Promise<boolean> => accepted(await store.copy(source, copyKey, conditions), 'copy')
    let copySourceIfMatch: S3MoveProbeResult['copySourceIfMatch'] = null
    for (const header of ['standard', 'rgw'] as const) {
      if (await copy({ sourceIfMatch: { header, etag: WRONG_ETAG } })) continue
      if (await copy({ sourceIfMatch: { header, etag } })) {
        copySourceIfMatch = header
        break
      }
    }
    // The copy exists from here on (an accepted copy above, or this one), with the source's content.
    if (copySourceIfMatch === null) await copy({})
    const copyIfNoneMatch = !(await copy({ ifNoneMatch: '*' }))
    const copyIfMatch = !(await copy({ ifMatch: quote(WRONG_ETAG) })) && (await copy({ ifMatch: quote(etag) }))
    const deleteIfMatch = !accepted(await store.remove(key, quote(WRONG_ETAG)), 'DELETE') && accepted(await store.remove(key, quote(etag)), 'DELETE')
    return { deleteIfMatch, copySourceIfMatch, copyIfNoneMatch, copyIfMatch }
  } finally {
    await Promise.all([store.purge(key).catch(() => undefined), store.purge(copyKey).catch(() => undefined)])
  }
}

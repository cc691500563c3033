/**
 * Shared by the S3 tests: a raw client on the test server (radosgw, booted by the global
 * setup), fresh prefixes that are purged afterwards, and the conformance factory whose
 * external hooks write straight through the raw client, behind the filesystem's back.
 */
import { randomUUID } from 'node:crypto'
import {
  DeleteObjectCommand,
  DeleteObjectsCommand,
  GetObjectCommand,
  ListObjectVersionsCommand,
  PutObjectCommand,
  S3Client,
  type S3ClientConfig,
} from '@aws-sdk/client-s3'
import type { ConformanceOptions } from '@seamfs/conformance'
import { isFsError, type FsError } from '@seamfs/core'
import { S3FileSystem, type S3FileSystemOptions } from '@seamfs/backend-s3'
import { inject } from 'vitest'
import { xmlCarries } from '../src/store.js'
import type { S3ServerInfo } from '../../../test-servers/s3.js'

// The SDK warns once per process that Node 20 support ends in 2027; the package pins its version.
process.env['AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED'] = 'true'

export const server: S3ServerInfo | null = inject('s3')
export const serverWhy: string = inject('s3Why')

/** A client with the settings radosgw needs (path style, plain Content-Length bodies). */
export function rawClient(info: S3ServerInfo, overrides: Partial<S3ClientConfig> = {}): S3Client {
  return new S3Client({
    endpoint: info.endpoint,
    region: info.region,
    credentials: { accessKeyId: info.accessKeyId, secretAccessKey: info.secretAccessKey },
    forcePathStyle: true,
    requestChecksumCalculation: 'WHEN_REQUIRED',
    responseChecksumValidation: 'WHEN_REQUIRED',
    ...overrides,
  })
}

/** A fresh key prefix for one test. */
export function freshPrefix(label = 't'): string {
  return `${label}/${randomUUID()}/`
}

/**
 * Deletes every key (and every version and delete marker) under `prefix`. Keys are listed
 * URL-encoded (a key with a control character cannot be written in the listing's XML), and one
 * that XML cannot carry is deleted on its own.
 */
export async function purge(client: S3Client, bucket: string, prefix: string): Promise<void> {
  let keyMarker: string | undefined
  let versionMarker: string | undefined
  const decoded = (key: string | undefined, encoded: boolean): string | undefined =>
    key === undefined || !encoded ? key : decodeURIComponent(key.replaceAll('+', ' '))
  for (;;) {
    const out = await client.send(
      new ListObjectVersionsCommand({
        Bucket: bucket,
        Prefix: prefix,
        EncodingType: 'url',
        ...(keyMarker === undefined ? {} : { KeyMarker: keyMarker }),
        ...(versionMarker === undefined ? {} : { VersionIdMarker: versionMarker }),
      }),
    )
    const encoded = out.EncodingType === 'url'
    const all = [...(out.Versions ?? []), ...(out.DeleteMarkers ?? [])]
    const objects = all.map((v) => ({ Key: decoded(v.Key, encoded), ...(v.VersionId === undefined ? {} : { VersionId: v.VersionId }) }))
    const single = objects.filter((o) => !xmlCarries(o.Key ?? ''))
    const batched = objects.filter((o) => xmlCarries(o.Key ?? ''))
    for (const o of single) await client.send(new DeleteObjectCommand({ Bucket: bucket, ...o }))
    // One DeleteObjects request takes up to 1,000 keys (a listing page holds at most 1,000).
    const batches = Array.from({ length: Math.ceil(batched.length / 1000) }, (_, i) => batched.slice(i * 1000, (i + 1) * 1000))
    await Promise.all(
      batches.map(async (Objects) => {
        const deleted = await client.send(new DeleteObjectsCommand({ Bucket: bucket, Delete: { Objects, Quiet: true } }))
        const failed = deleted.Errors ?? []
        if (failed.length > 0) throw new Error(`purge: ${failed.length} keys not deleted, e.g. ${failed[0]?.Key}: ${failed[0]?.Code} ${failed[0]?.Message}`)
      }),
    )
    if (out.IsTruncated !== true) return
    keyMarker = decoded(out.NextKeyMarker, encoded)
    versionMarker = out.NextVersionIdMarker
  }
}

/** The conformance factory for one bucket: each subject gets its own prefix, purged on dispose. */
export function conformanceOptions(
  info: S3ServerInfo,
  bucket: string,
  name: string,
  extra: Partial<S3FileSystemOptions> = {},
): ConformanceOptions<S3FileSystem> {
  const client = rawClient(info)
  const keyOf = (fs: S3FileSystem, path: string): string => fs.prefix + path
  return {
    name,
    create: async ({ limits }) => {
      const fs = await S3FileSystem.open({ client, bucket, prefix: freshPrefix('conformance'), ...limits, ...extra })
      return { fs, dispose: () => purge(client, bucket, fs.prefix) }
    },
    external: {
      writeBytes: async ({ fs }, path, bytes) => {
        await client.send(new PutObjectCommand({ Bucket: bucket, Key: keyOf(fs, path), Body: bytes, ContentLength: bytes.byteLength }))
      },
      readBytes: async ({ fs }, path) => {
        const out = await client.send(new GetObjectCommand({ Bucket: bucket, Key: keyOf(fs, path) }))
        return out.Body === undefined ? new Uint8Array(0) : out.Body.transformToByteArray()
      },
      remove: async ({ fs }, path) => {
        await client.send(new DeleteObjectCommand({ Bucket: bucket, Key: keyOf(fs, path) }))
      },
    },
    // Racing child processes open the same prefix through fixtures/open.js (the built package).
    crossProcess: {
      module: new URL('./fixtures/open.js', import.meta.url).href,
      descriptor: ({ fs }) => ({ ...info, bucket, prefix: fs.prefix }),
    },
    // A remote store: fewer model runs than the in-process backends.
    options: { modelRuns: 30 },
  }
}

/** The error `operation` fails with: an FsError (anything else escaping fails the test). */
export async function failure(operation: Promise<unknown>): Promise<FsError> {
  try {
    await operation
  } catch (err) {
    if (isFsError(err)) return err
    throw new Error(`a raw error escaped: ${String(err)}`, { cause: err })
  }
  throw new Error('expected the operation to fail')
}

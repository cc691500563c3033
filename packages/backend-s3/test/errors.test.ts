/** The error table, row by row, on synthetic SDK-shaped errors (the only test without the server). */
import { FsError } from '@seamfs/core'
import { S3_ERROR_TABLE, toFsError } from '../src/errors.js'
import { describe, expect, it } from 'vitest'

const s3 = (name: string, status: number): unknown => Object.assign(new Error(name), { name, $metadata: { httpStatusCode: status } })
const sys = (code: string): unknown => Object.assign(new Error('socket trouble'), { code })

const ROWS: ReadonlyArray<readonly [string, unknown, string, boolean]> = [
  ['404 NoSuchKey', s3('NoSuchKey', 404), 'FS_NOT_FOUND', false],
  ['404 NotFound (HEAD)', s3('NotFound', 404), 'FS_NOT_FOUND', false],
  ['404 NoSuchBucket', s3('NoSuchBucket', 404), 'FS_IO_ERROR', false],
  ['403 AccessDenied', s3('AccessDenied', 403), 'FS_PERMISSION_DENIED', false],
  ['403 SignatureDoesNotMatch', s3('SignatureDoesNotMatch', 403), 'FS_PERMISSION_DENIED', false],
  ['403 with an unknown code', s3('Forbidden', 403), 'FS_PERMISSION_DENIED', false],
  ['412 PreconditionFailed', s3('PreconditionFailed', 412), 'FS_STALE_VERSION', false],
  ['409 ConditionalRequestConflict', s3('ConditionalRequestConflict', 409), 'FS_STALE_VERSION', true],
  ['400 EntityTooLarge', s3('EntityTooLarge', 400), 'FS_TOO_LARGE', false],
  ['400 KeyTooLongError', s3('KeyTooLongError', 400), 'FS_IO_ERROR', false],
  ['411 MissingContentLength', s3('MissingContentLength', 411), 'FS_IO_ERROR', false],
  ['400 RequestTimeout', s3('RequestTimeout', 400), 'FS_IO_ERROR', true],
  ['503 SlowDown', s3('SlowDown', 503), 'FS_IO_ERROR', true],
  ['500 InternalError', s3('InternalError', 500), 'FS_IO_ERROR', true],
  ['507 with an unknown code', s3('Unknown', 507), 'FS_IO_ERROR', true],
  ['418 with an unknown code', s3('Teapot', 418), 'FS_IO_ERROR', false],
  ['ECONNRESET (no answer)', sys('ECONNRESET'), 'FS_IO_ERROR', true],
  ['ECONNREFUSED', sys('ECONNREFUSED'), 'FS_IO_ERROR', true],
  ['EPIPE', sys('EPIPE'), 'FS_IO_ERROR', true],
  ['an unknown system error code', sys('EWHATEVER'), 'FS_IO_ERROR', true],
  ['TimeoutError (SDK socket timeout)', Object.assign(new Error('timeout'), { name: 'TimeoutError' }), 'FS_IO_ERROR', true],
  ['a plain Error (a bug, not the network)', new TypeError('x is not a function'), 'FS_IO_ERROR', false],
  ['AbortError', Object.assign(new Error('aborted'), { name: 'AbortError' }), 'FS_ABORTED', false],
]

describe('S3 error table', () => {
  for (const [label, err, code, retryable] of ROWS) {
    it(`${label} → ${code}${retryable ? ' (retryable)' : ''}`, () => {
      const mapped = toFsError(err, 'read', '/a.txt')
      expect([mapped.code, mapped.retryable]).toEqual([code, retryable])
      expect(mapped.message.startsWith('cannot read "/a.txt"') || code === 'FS_ABORTED').toBe(true)
      expect(mapped.cause).toBe(err)
    })
  }

  it('an FsError passes through unchanged', () => {
    const err = FsError.stale('write', '/a', 'changed')
    expect(toFsError(err, 'write', '/a')).toBe(err)
  })

  it('every row maps to a seamfs code; network rows are retryable', () => {
    for (const [key, row] of Object.entries(S3_ERROR_TABLE)) {
      expect(row.code).toMatch(/^FS_/)
      if (/^E[A-Z]+$/.test(key)) expect(row.retryable, key).toBe(true)
    }
  })
})

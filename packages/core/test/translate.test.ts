import { describe, expect, it } from 'vitest'
import { FsError, errorCodeOf, processWide, translateError, type ErrorRow } from '@seamfs/core/backend'

const TABLE: Record<string, ErrorRow> = {
  ENOENT: { code: 'FS_NOT_FOUND', reason: 'not found' },
  EMFILE: { code: 'FS_IO_ERROR', reason: 'too many open files', retryable: true },
}
const lookup = (err: unknown): ErrorRow | undefined => {
  const code = errorCodeOf(err)
  return code === undefined ? undefined : TABLE[code]
}

describe('translateError', () => {
  it('passes an FsError through untouched when it names its verb and path', () => {
    const original = FsError.stale('edit', '/q', 'changed')
    expect(translateError(original, 'write', '/p', lookup)).toBe(original)
  })

  it('gives an FsError without a verb or path those of the call, keeping everything else', () => {
    const cause = new Error('root cause')
    const original = new FsError('FS_IO_ERROR', 'stale', { cause, retryable: true, indeterminate: true, details: { size: 1 } })
    const placed = translateError(original, 'write', '/p', lookup)
    expect([placed.verb, placed.path, placed.code, placed.message, placed.cause, placed.retryable, placed.indeterminate, placed.details]).toEqual([
      'write',
      '/p',
      'FS_IO_ERROR',
      'stale',
      cause,
      true,
      true,
      { size: 1 },
    ])
    const halfPlaced = translateError(new FsError('FS_NOT_FOUND', 'x', { verb: 'read' }), 'write', '/p', lookup)
    expect([halfPlaced.verb, halfPlaced.path]).toEqual(['read', '/p'])
  })

  it('turns an abort into FS_ABORTED with the verb, whatever the table says', () => {
    const abort = Object.assign(new Error('aborted'), { name: 'AbortError', code: 'ENOENT' })
    const mapped = translateError(abort, 'edit', '/p', lookup)
    expect(mapped.code).toBe('FS_ABORTED')
    expect(mapped.message).toBe('edit aborted')
  })

  it('uses the row: code, reason, retryable, and the foreign error as cause', () => {
    const foreign = Object.assign(new Error('EMFILE: raw text'), { code: 'EMFILE' })
    const mapped = translateError(foreign, 'read', '/a.txt', lookup)
    expect([mapped.code, mapped.message, mapped.retryable, mapped.cause]).toEqual(['FS_IO_ERROR', 'cannot read "/a.txt": too many open files', true, foreign])
    expect(translateError(Object.assign(new Error(), { code: 'ENOENT' }), 'read', '/a', lookup).retryable).toBe(false)
  })

  it('falls back to FS_IO_ERROR with the foreign message, never parsing it', () => {
    const mapped = translateError(new Error('ENOENT: looks like not found'), 'list', '/d', lookup)
    expect(mapped.code).toBe('FS_IO_ERROR')
    expect(mapped.message).toBe('cannot list "/d": ENOENT: looks like not found')
    expect(translateError('a string', 'stat', '/s', lookup).message).toBe('cannot stat "/s": a string')
  })
})

describe('processWide', () => {
  it('returns one value per name for the whole process, shared through the global registry', () => {
    const name = `test:${Math.random()}`
    const first = processWide(name, () => ({ made: 1 }))
    expect(processWide(name, () => ({ made: 2 }))).toBe(first)
    expect((globalThis as unknown as Record<symbol, unknown>)[Symbol.for(`@seamfs/${name}`)]).toBe(first)
    expect(processWide(`${name}:other`, () => ({ made: 3 }))).not.toBe(first)
  })
})

import { describe, expect, it } from 'vitest'
import fc from 'fast-check'
import { FS_ERROR_CODES, FsError, abortedError, isAbortError, isFsError, throwIfAborted, type FsErrorCode } from '@seamfs/core/backend'
import { expectFsError } from './helpers.js'

const code = fc.constantFrom(...FS_ERROR_CODES)

describe('FS_ERROR_CODES', () => {
  it('lists the 15 FsErrorCodes, once each', () => {
    expect(FS_ERROR_CODES).toHaveLength(15)
    expect(new Set(FS_ERROR_CODES).size).toBe(15)
    expect(FS_ERROR_CODES).toEqual(
      expect.arrayContaining([
        'FS_NOT_FOUND',
        'FS_NOT_DIRECTORY',
        'FS_NOT_TEXT',
        'FS_NOT_REGULAR_FILE',
        'FS_PERMISSION_DENIED',
        'FS_SANDBOX_DENIED',
        'FS_IO_ERROR',
        'FS_STALE_VERSION',
        'FS_NOT_OBSERVED',
        'FS_AMBIGUOUS_EDIT',
        'FS_EDIT_NOT_FOUND',
        'FS_ABORTED',
        'FS_TOO_LARGE',
        'FS_UNSUPPORTED',
      ]),
    )
  })

  it('is frozen', () => {
    expect(Object.isFrozen(FS_ERROR_CODES)).toBe(true)
    expect(() => (FS_ERROR_CODES as FsErrorCode[]).push('FS_NOT_FOUND')).toThrow(TypeError)
  })
})

describe('FsError', () => {
  it('carries name, code and message, and is an Error', () => {
    const err = new FsError('FS_NOT_FOUND', 'no such file "a"')
    expect(err).toBeInstanceOf(Error)
    expect(err).toBeInstanceOf(FsError)
    expect(err.name).toBe('FsError')
    expect(err.code).toBe('FS_NOT_FOUND')
    expect(err.message).toBe('no such file "a"')
    expect(String(err)).toBe('FsError: no such file "a"')
    expect(err.stack).toContain('no such file')
  })

  it('defaults retryable to false and keeps an explicit value', () => {
    expect(new FsError('FS_IO_ERROR', 'x').retryable).toBe(false)
    expect(new FsError('FS_IO_ERROR', 'x', {}).retryable).toBe(false)
    expect(new FsError('FS_IO_ERROR', 'x', { retryable: true }).retryable).toBe(true)
    expect(new FsError('FS_IO_ERROR', 'x', { retryable: false }).retryable).toBe(false)
  })

  it('keeps the cause it translates (by identity), and has none when not given', () => {
    const cause = Object.assign(new Error('EACCES'), { code: 'EACCES' })
    const err = new FsError('FS_PERMISSION_DENIED', 'denied', { cause })
    expect(err.cause).toBe(cause)
    const nonError = { status: 503 }
    expect(new FsError('FS_IO_ERROR', 'x', { cause: nonError, retryable: true }).cause).toBe(nonError)
    const bare = new FsError('FS_IO_ERROR', 'x')
    expect('cause' in bare).toBe(false)
    expect(bare.cause).toBeUndefined()
  })

  it('round-trips every code', () => {
    fc.assert(
      fc.property(code, fc.string(), (c, message) => {
        const err = new FsError(c, message)
        expect(err.code).toBe(c)
        expect(err.message).toBe(message)
        expect(isFsError(err)).toBe(true)
        expect(isFsError(err, c)).toBe(true)
      }),
    )
  })
})

describe('isFsError', () => {
  it('recognizes an FsError from another copy of the package by duck typing', () => {
    expect(isFsError({ name: 'FsError', code: 'FS_NOT_FOUND' })).toBe(true)
    expect(isFsError({ name: 'FsError', code: 'FS_NOT_FOUND' }, 'FS_NOT_FOUND')).toBe(true)
    class ForeignFsError extends Error {
      override readonly name = 'FsError'
      readonly code = 'FS_IO_ERROR'
    }
    const foreign = new ForeignFsError('other copy')
    expect(foreign).not.toBeInstanceOf(FsError)
    expect(isFsError(foreign)).toBe(true)
    expect(isFsError(foreign, 'FS_IO_ERROR')).toBe(true)
    expect(isFsError(foreign, 'FS_NOT_FOUND')).toBe(false)
  })

  it('filters by code', () => {
    fc.assert(
      fc.property(code, code, (actual, asked) => {
        const err = new FsError(actual, 'm')
        expect(isFsError(err, asked)).toBe(actual === asked)
        expect(isFsError({ name: 'FsError', code: actual }, asked)).toBe(actual === asked)
      }),
      { numRuns: 300 },
    )
  })

  it('rejects unknown codes, even with the right name', () => {
    expect(isFsError({ name: 'FsError', code: 'FS_NOPE' })).toBe(false)
    expect(isFsError({ name: 'FsError', code: 'ENOENT' })).toBe(false)
    expect(isFsError({ name: 'FsError', code: 'fs_not_found' })).toBe(false)
    expect(isFsError({ name: 'FsError', code: '' })).toBe(false)
    expect(isFsError({ name: 'FsError' })).toBe(false)
    expect(isFsError({ name: 'FsError', code: 404 })).toBe(false)
    const fake = new FsError('FS_NOT_FOUND', 'x')
    ;(fake as unknown as { code: string }).code = 'FS_SOMETHING_ELSE'
    expect(isFsError(fake)).toBe(false)
  })

  it('rejects other names and non-objects', () => {
    expect(isFsError({ name: 'Error', code: 'FS_NOT_FOUND' })).toBe(false)
    expect(isFsError({ name: 'fserror', code: 'FS_NOT_FOUND' })).toBe(false)
    expect(isFsError({ code: 'FS_NOT_FOUND' })).toBe(false)
    expect(isFsError(Object.assign(new Error('x'), { code: 'FS_NOT_FOUND' }))).toBe(false)
    expect(isFsError(Object.assign(new Error('x'), { code: 'ENOENT' }))).toBe(false)
    for (const v of [null, undefined, 'FsError', 'FS_NOT_FOUND', 42, true, Symbol('FsError')]) {
      expect(isFsError(v)).toBe(false)
    }
  })

  it('accepts any object whose name and code fit, whatever else it has', () => {
    fc.assert(
      fc.property(code, fc.dictionary(fc.string(), fc.anything()), (c, extra) => {
        expect(isFsError({ ...extra, name: 'FsError', code: c })).toBe(true)
      }),
      { numRuns: 200 },
    )
  })
})

describe('abort helpers', () => {
  it('throwIfAborted does nothing without a signal or with a live one', () => {
    expect(() => throwIfAborted(undefined, 'read')).not.toThrow()
    expect(() => throwIfAborted(new AbortController().signal, 'read')).not.toThrow()
  })

  it('throwIfAborted throws FS_ABORTED "<verb> aborted" with the reason as cause', () => {
    const reason = new Error('user cancelled')
    const controller = new AbortController()
    controller.abort(reason)
    const err = expectFsError(() => throwIfAborted(controller.signal, 'write'), 'FS_ABORTED')
    expect(err.message).toBe('write aborted')
    expect(err.cause).toBe(reason)
    expect(err.retryable).toBe(false)
  })

  it('abortedError builds the same error', () => {
    const err = abortedError('list', 'why')
    expect(isFsError(err, 'FS_ABORTED')).toBe(true)
    expect(err.message).toBe('list aborted')
    expect(err.cause).toBe('why')
  })

  it('isAbortError recognizes AbortError and ABORT_ERR only', () => {
    expect(isAbortError(AbortSignal.abort().reason)).toBe(true)
    expect(isAbortError(new DOMException('x', 'AbortError'))).toBe(true)
    expect(isAbortError({ name: 'AbortError' })).toBe(true)
    expect(isAbortError(Object.assign(new Error('x'), { code: 'ABORT_ERR' }))).toBe(true)
    expect(isAbortError(new Error('abort'))).toBe(false)
    expect(isAbortError(new DOMException('x', 'TimeoutError'))).toBe(false)
    expect(isAbortError(abortedError('read'))).toBe(false)
    expect(isAbortError(null)).toBe(false)
    expect(isAbortError('AbortError')).toBe(false)
  })
})

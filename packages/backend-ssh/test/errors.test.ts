import { describe, expect, it } from 'vitest'
import { FS_ERROR_CODES, FsError, type FsVerb } from '@seamfs/core'
import { translateError } from '@seamfs/core/backend'
import { ConnectionFailure, sftpErrorRow, STATUS_TABLE } from '../src/errors.js'

const toFsError = (err: unknown, verb: FsVerb, path: string): FsError => translateError(err, verb, path, sftpErrorRow)

/** ssh2's SFTP errors carry the status as a numeric `code`; connection errors a `level` or an errno string. */
const sftpError = (code: number): Error => Object.assign(new Error('server text is never read'), { code })

describe('the SFTP status table (unit: no server)', () => {
  it.each([
    [2, 'FS_NOT_FOUND', false],
    [3, 'FS_PERMISSION_DENIED', false],
    [4, 'FS_IO_ERROR', false],
    [5, 'FS_IO_ERROR', false],
    [6, 'FS_IO_ERROR', true],
    [7, 'FS_IO_ERROR', true],
    [8, 'FS_UNSUPPORTED', false],
    [99, 'FS_IO_ERROR', false],
  ] as const)('status %i is %s (retryable %s)', (status, code, retryable) => {
    const err = toFsError(sftpError(status), 'read', '/r/a.txt')
    expect(err).toMatchObject({ name: 'FsError', code, retryable })
    expect(err.message).toContain('"/r/a.txt"')
    expect(err.cause).toBeInstanceOf(Error)
  })

  it('every row maps to a known code', () => {
    for (const row of Object.values(STATUS_TABLE)) expect(FS_ERROR_CODES).toContain(row.code)
  })

  it('network failures are retryable FS_IO_ERROR: a dropped connection, a reset socket, a timeout', () => {
    for (const err of [
      new Error('No response from server'),
      Object.assign(new Error('read ECONNRESET'), { code: 'ECONNRESET' }),
      Object.assign(new Error('connect ECONNREFUSED'), { level: 'client-socket' }),
      Object.assign(new Error('Timed out while waiting for handshake'), { level: 'client-timeout' }),
    ]) {
      expect(toFsError(err, 'write', 'x')).toMatchObject({ code: 'FS_IO_ERROR', retryable: true })
    }
  })

  it('an authentication failure is FS_PERMISSION_DENIED; an FsError and an abort pass through', () => {
    const auth = Object.assign(new Error('All configured authentication methods failed'), { level: 'client-authentication' })
    expect(toFsError(auth, 'resolve', 'x')).toMatchObject({ code: 'FS_PERMISSION_DENIED', retryable: false })
    const own = FsError.stale('edit', 'x', 'changed')
    expect(toFsError(own, 'edit', 'x')).toBe(own)
    expect(toFsError(Object.assign(new Error('aborted'), { name: 'AbortError' }), 'read', 'x').code).toBe('FS_ABORTED')
  })

  it("the connection's own failures carry their row: the operation names itself in the message", () => {
    const closed = toFsError(new ConnectionFailure({ code: 'FS_IO_ERROR', reason: 'the SFTP filesystem is closed' }), 'read', '/r/a.txt')
    expect(closed).toMatchObject({ code: 'FS_IO_ERROR', retryable: false, message: 'cannot read "/r/a.txt": the SFTP filesystem is closed' })
  })
})

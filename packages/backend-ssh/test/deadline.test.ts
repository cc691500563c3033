/**
 * The request deadline, lost answers and commit points, without a server: a `Session` over a
 * stand-in for ssh2's SFTP channel that answers only when told to.
 */
import type { SFTPWrapper } from 'ssh2'
import { describe, expect, it } from 'vitest'
import { FsError, isFsError, type FsVerb } from '@seamfs/core'
import { translateError } from '@seamfs/core/backend'
import { Session } from '../src/connection.js'
import { CommitPoint, DEFINITE_ABORT_MS, droppedConnection, LostAnswer, SessionGone, sftpErrorRow } from '../src/errors.js'
import { retryRead } from '../src/retry.js'

type Cb = (err?: Error | null, value?: unknown) => void

/** Stands in for ssh2's SFTPWrapper: `stat` keeps its callback until the test answers it. */
class StallingSftp {
  readonly waiting: Cb[] = []
  readonly outgoing = { state: 'open' }
  stat(_path: string, cb: Cb): void {
    this.waiting.push(cb)
  }
}

const sleep = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms))
const toFsError = (err: unknown, verb: FsVerb): FsError => translateError(err, verb, '/r/a.txt', sftpErrorRow)

async function settled(p: Promise<unknown>): Promise<unknown> {
  return p.then(
    () => 'fulfilled',
    (err: unknown) => err,
  )
}

describe('the request deadline of a Session (unit: no server)', () => {
  it('the oldest unanswered request reaching requestTimeoutMs fails every pending request at once, once; later requests are refused unsent; late answers are dropped', async () => {
    const sftp = new StallingSftp()
    const expired: LostAnswer[] = []
    const s = new Session(sftp as unknown as SFTPWrapper, 1, { requestTimeoutMs: 150, onExpire: (err) => expired.push(err) })
    const started = performance.now()
    const first = s.stat('/a')
    await sleep(40)
    const second = s.stat('/b')
    const third = s.stat('/c')
    // The first answered: the deadline now runs from the second (sent 40 ms later).
    sftp.waiting[0]?.(undefined, { mode: 0 })
    expect(await first).toEqual({ mode: 0 })
    const [b, c] = await Promise.all([settled(second), settled(third)])
    const elapsed = performance.now() - started
    expect(elapsed).toBeGreaterThanOrEqual(40 + 150 - 5)
    expect(elapsed).toBeLessThan(40 + 150 + 150)
    for (const err of [b, c]) {
      expect(err).toBeInstanceOf(LostAnswer)
      expect((err as Error).message).toBe('the server did not answer for 150 ms (the connection was closed; the next call reconnects)')
    }
    expect(expired).toHaveLength(1)
    expect(s.dead).toBe(true)
    expect(s.pending).toBe(0)
    // The server wakes: its answers find nobody waiting.
    sftp.waiting[1]?.(undefined, { mode: 0 })
    sftp.waiting[2]?.(Object.assign(new Error('x'), { code: 2 }))
    // Refused before it was sent: not a lost answer.
    const refused = await settled(s.stat('/d'))
    expect(refused).toBeInstanceOf(SessionGone)
    expect(sftp.waiting).toHaveLength(3)
  })

  it('requests answered in time never expire (one timer, re-armed for the next oldest)', async () => {
    const sftp = new StallingSftp()
    let expired = 0
    const s = new Session(sftp as unknown as SFTPWrapper, 1, { requestTimeoutMs: 100, onExpire: () => expired++ })
    for (let i = 0; i < 6; i++) {
      const p = s.stat(`/${i}`)
      await sleep(60)
      sftp.waiting[i]?.(undefined, { mode: i })
      expect(await p).toEqual({ mode: i })
    }
    await sleep(150)
    expect(expired).toBe(0)
    expect(s.dead).toBe(false)
  })

  it('a long queue whose answers keep coming is no hung server: the deadline counts from the last answer', async () => {
    const sftp = new StallingSftp()
    let expired = 0
    const s = new Session(sftp as unknown as SFTPWrapper, 1, { requestTimeoutMs: 100, onExpire: () => expired++ })
    const all = Array.from({ length: 5 }, (_, i) => s.stat(`/${i}`))
    // Answered in order, one every 60 ms: the last waits 300 ms, but the server never went 100 ms silent.
    for (let i = 0; i < 5; i++) {
      await sleep(60)
      sftp.waiting[i]?.(undefined, { mode: i })
    }
    expect(await Promise.all(all)).toEqual([0, 1, 2, 3, 4].map((mode) => ({ mode })))
    expect(expired).toBe(0)
  })

  it('an error without an SFTP status (ssh2 gave up: the channel closed) is a LostAnswer; a status passes through', async () => {
    const sftp = new StallingSftp()
    const s = new Session(sftp as unknown as SFTPWrapper, 1)
    const lost = s.stat('/a')
    const missing = s.stat('/b')
    sftp.waiting[0]?.(new Error('No response from server'))
    sftp.waiting[1]?.(Object.assign(new Error('No such file'), { code: 2 }))
    const err = await settled(lost)
    expect(err).toBeInstanceOf(LostAnswer)
    expect((err as Error).cause).toBeInstanceOf(Error)
    expect(await settled(missing)).toMatchObject({ code: 2 })
    // A channel that is closing sends nothing more: refused at once.
    sftp.outgoing.state = 'closing'
    expect(await settled(s.stat('/c'))).toBeInstanceOf(SessionGone)
  })

  it('fail() (the connection dropped) fails what is pending with its error and refuses the rest', async () => {
    const sftp = new StallingSftp()
    const s = new Session(sftp as unknown as SFTPWrapper, 1)
    const pending = s.stat('/a')
    s.fail(new LostAnswer('the connection was lost before the server answered'))
    expect(await settled(pending)).toBeInstanceOf(LostAnswer)
    expect(await settled(s.stat('/b'))).toBeInstanceOf(SessionGone)
  })
})

describe('honest outcomes: lost answers, refusals, commit points (unit)', () => {
  it('a lost answer makes a mutation indeterminate and a read not; a request refused unsent is definite; both retryable', () => {
    const lost = new LostAnswer('the connection was lost before the server answered')
    for (const verb of ['write', 'edit', 'remove', 'rename', 'create directory'] as const) {
      expect(toFsError(lost, verb)).toMatchObject({ code: 'FS_IO_ERROR', retryable: true, indeterminate: true })
    }
    expect(toFsError(lost, 'read')).toMatchObject({ code: 'FS_IO_ERROR', retryable: true, indeterminate: false })
    expect(toFsError(new SessionGone(), 'write')).toMatchObject({ code: 'FS_IO_ERROR', retryable: true, indeterminate: false })
    expect(toFsError(lost, 'write').message).toBe('cannot write "/r/a.txt": the connection was lost before the server answered')
  })

  it('a lost answer before the commit point is a definite failure; after it, indeterminate', () => {
    const lost = new LostAnswer('the server did not answer for 10 ms')
    const point = new CommitPoint('write')
    const before = toFsError(point.outcome(lost), 'write')
    expect(before).toMatchObject({ code: 'FS_IO_ERROR', retryable: true, indeterminate: false })
    expect(before.message).toContain('nothing was changed')
    // Refused unsent before the point: definite as it is.
    expect(toFsError(point.outcome(new SessionGone()), 'write').indeterminate).toBe(false)
    point.reached()
    expect(toFsError(point.outcome(lost), 'write').indeterminate).toBe(true)
    // After the point, a request refused on the dead session (a probe of what the rename did) leaves the change unknown too.
    expect(toFsError(point.outcome(new SessionGone()), 'write').indeterminate).toBe(true)
    // Other failures are left as they are.
    const status = Object.assign(new Error('x'), { code: 4 })
    expect(new CommitPoint('write').outcome(status)).toBe(status)
  })

  it('CommitPoint.run: an abort before the point is a definite FS_ABORTED within DEFINITE_ABORT_MS, and the point then refuses to be reached', async () => {
    const controller = new AbortController()
    let reach: () => void = () => undefined
    let release: () => void = () => undefined
    const gate = new Promise<void>((resolve) => (release = resolve))
    let reached: unknown = 'not yet'
    const running = CommitPoint.run('write', controller.signal, async (point) => {
      reach = point.reached
      await gate
      try {
        reach()
        reached = true
      } catch (err) {
        reached = err
        throw err
      }
      return 'done'
    })
    const aborted = performance.now()
    controller.abort(new Error('the caller left'))
    const err = await settled(running)
    expect(performance.now() - aborted).toBeLessThan(DEFINITE_ABORT_MS + 50)
    expect(isFsError(err, 'FS_ABORTED') && !err.indeterminate).toBe(true)
    release()
    await sleep(10)
    expect(isFsError(reached, 'FS_ABORTED')).toBe(true)
  })

  it('CommitPoint.run: an abort after the point leaves the answer to the mutation (core flags it indeterminate after its grace)', async () => {
    const controller = new AbortController()
    let release: () => void = () => undefined
    const gate = new Promise<void>((resolve) => (release = resolve))
    const running = CommitPoint.run('write', controller.signal, async (point) => {
      point.reached()
      await gate
      return 'published'
    })
    controller.abort()
    release()
    expect(await running).toBe('published')
  })

  it('droppedConnection: lost answers and refusals, also wrapped in an FS_IO_ERROR; never a status the server sent', () => {
    const lost = new LostAnswer('lost')
    expect(droppedConnection(lost)).toBe(true)
    expect(droppedConnection(new SessionGone())).toBe(true)
    expect(droppedConnection(toFsError(lost, 'resolve'))).toBe(true)
    expect(droppedConnection(FsError.io('stat', 'x', 'the root is not usable', { cause: toFsError(lost, 'resolve') }))).toBe(true)
    expect(droppedConnection(Object.assign(new Error('failure'), { code: 4 }))).toBe(false)
    expect(droppedConnection(FsError.notFound('stat', 'x', lost))).toBe(false)
  })
})

describe('read retries (unit)', () => {
  it('a read that met a dropped connection runs again, at most twice, with backoff; a server status is not retried', async () => {
    let runs = 0
    const started = performance.now()
    const value = await retryRead('stat', undefined, async () => {
      if (++runs < 3) throw new LostAnswer('lost')
      return 'answered'
    })
    expect(value).toBe('answered')
    expect(runs).toBe(3)
    expect(performance.now() - started).toBeGreaterThanOrEqual(50 + 200 - 5)

    runs = 0
    const always = await settled(
      retryRead('stat', undefined, async () => {
        runs++
        throw new SessionGone()
      }),
    )
    expect(always).toBeInstanceOf(SessionGone)
    expect(runs).toBe(3)

    runs = 0
    const status = Object.assign(new Error('no such file'), { code: 2 })
    expect(
      await settled(
        retryRead('stat', undefined, async () => {
          runs++
          throw status
        }),
      ),
    ).toBe(status)
    expect(runs).toBe(1)
  })

  it('an abort ends the retries: during a backoff, FS_ABORTED at once', async () => {
    const controller = new AbortController()
    let runs = 0
    const started = performance.now()
    setTimeout(() => controller.abort(), 20)
    const err = await settled(
      retryRead('read', controller.signal, async () => {
        runs++
        throw new LostAnswer('lost')
      }),
    )
    expect(isFsError(err, 'FS_ABORTED')).toBe(true)
    expect(runs).toBe(1)
    expect(performance.now() - started).toBeLessThan(200)
  })
})

/**
 * A hung server and a killed one, against a sshd of this file's own (the shared one is
 * never frozen): with every process of the server SIGSTOPped, a call with a signal is FS_ABORTED
 * at its abort, a call without one fails at `requestTimeoutMs`, and the same filesystem works again
 * after the thaw, with no handle left open on the server and no staging left in the directory.
 * Then writes while the server process of the connection is killed at random moments: every
 * outcome is honest (a success landed, a definite failure did not, an indeterminate one either).
 */
import { performance } from 'node:perf_hooks'
import { setTimeout as sleep } from 'node:timers/promises'
import { Client, type SFTPWrapper } from 'ssh2'
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest'
import { isFsError, type FsTarget } from '@seamfs/core'
import { SftpFileSystem } from '@seamfs/backend-ssh'
import { startSftpInstance, type SftpInstance } from '../../../test-servers/sftp.js'
import { RawSftp } from './raw.js'
import { connections, freeze, killConnection, openFds, thaw, type SshdConnection } from './sshd-processes.js'

const shared = inject('sftp')

/** Settles `op`: its error (undefined on success) and when it settled, in ms from `since`. */
async function timed(op: Promise<unknown>, since: number): Promise<{ err: unknown; ms: number }> {
  try {
    await op
    return { err: undefined, ms: performance.now() - since }
  } catch (err) {
    return { err, ms: performance.now() - since }
  }
}

/** Polls `check` every 50 ms until it is true or `ms` passed; its last answer. */
async function eventually(check: () => boolean | Promise<boolean>, ms: number): Promise<boolean> {
  const end = performance.now() + ms
  for (;;) {
    if (await check()) return true
    if (performance.now() > end) return false
    await sleep(50)
  }
}

const staging = (names: readonly string[]): string[] => names.filter((n) => n.startsWith('.seamfs-tmp-'))

describe.skipIf(shared === null)(`a hung or killed server${shared === null ? ` (skipped: ${inject('sftpWhy')})` : ''}`, () => {
  let sshd: SftpInstance
  let raw: RawSftp
  /** The raw connection's processes: never frozen alone, never killed. */
  let rawConnection: SshdConnection
  let stopped: number[] = []

  beforeAll(async () => {
    sshd = await startSftpInstance()
    raw = await RawSftp.connect(sshd.info)
    const [only] = connections(sshd.pid)
    if (only === undefined) throw new Error('the raw connection has no server process')
    rawConnection = only
  })

  afterAll(async () => {
    if (sshd === undefined) return
    thaw(sshd.pid, stopped)
    raw?.close()
    await sshd.stop()
  })

  /** The server processes of the connections other than the raw one. */
  const others = (): SshdConnection[] => connections(sshd.pid).filter((c) => c.monitor !== rawConnection.monitor)

  /** Freezes the server for the length of `during`; always thawed after. */
  async function frozen<T>(during: () => Promise<T>): Promise<T> {
    stopped = freeze(sshd.pid)
    try {
      return await during()
    } finally {
      thaw(sshd.pid, stopped)
      stopped = []
    }
  }

  it('frozen: readText, writeText, listDir, stat, remove and createDirectory with a 2 s signal are FS_ABORTED within 2.5 s (the mutations definite: their change was not sent); after the thaw the same filesystem works, no handle stays open, nothing changed, no staging is left', async () => {
    const root = await raw.freshDir(sshd.info.root, 'abort-')
    const fs = new SftpFileSystem({ ...sshd.info, root })
    try {
      const [file, dir, fresh, kept, sub] = (await Promise.all(['a.txt', '.', 'new.txt', 'kept.txt', 'sub'].map((p) => fs.resolve(p)))) as [
        FsTarget,
        FsTarget,
        FsTarget,
        FsTarget,
        FsTarget,
      ]
      await fs.writeText(kept, 'not removed')
      await fs.writeText(file, 'before the freeze')
      expect(await fs.readText(file)).toBe('before the freeze')
      const [mine] = others()
      const sftpPid = mine?.sftp
      expect(sftpPid).toBeDefined()
      // Idle: what the server process holds open with no handle of this filesystem's (a CLOSE sent
      // without waiting may still be on its way: the least seen over a moment).
      let baseline = Infinity
      for (let i = 0; i < 10; i++, await sleep(30)) baseline = Math.min(baseline, openFds(sftpPid as number) ?? Infinity)
      const outcomes = await frozen(async () => {
        const since = performance.now()
        const signal = (): AbortSignal => AbortSignal.timeout(2000)
        return Promise.all([
          timed(fs.readText(file, { signal: signal() }), since),
          timed(fs.writeText(fresh, 'written during the freeze', { signal: signal() }), since),
          timed(fs.listDir(dir, { signal: signal() }), since),
          timed(fs.stat(file, { signal: signal() }), since),
          timed(fs.remove(kept, { signal: signal() }), since),
          timed(fs.createDirectory(sub, { signal: signal() }), since),
        ])
      })
      for (const { err, ms } of outcomes) {
        expect(isFsError(err, 'FS_ABORTED'), String(err)).toBe(true)
        expect(ms).toBeLessThanOrEqual(2500)
        // The mutations were aborted before their publishing request went out: definite, not indeterminate.
        expect(isFsError(err) && err.indeterminate).toBe(false)
      }

      // Thawed: the same instance, the same connection (the deadline, 30 s, was not reached).
      expect(await fs.readText(file)).toBe('before the freeze')
      await fs.writeText(file, 'after the thaw')
      expect((await fs.listDir(dir)).map((e) => e.name)).toContain('a.txt')
      expect(await fs.readText(file)).toBe('after the thaw')
      expect(others().map((c) => c.sftp)).toEqual([sftpPid])
      // The aborted operations ran on after their callers left and closed every handle they opened.
      expect(await eventually(() => (openFds(sftpPid as number) ?? Infinity) <= baseline, 5000)).toBe(true)
      // The aborted write, remove and mkdir never sent their change: nothing changed, no staging is left.
      expect(await eventually(async () => staging(await raw.names(root)).length === 0, 5000)).toBe(true)
      expect(await raw.names(root)).toEqual(['a.txt', 'kept.txt'])
    } finally {
      await fs.close()
    }
  }, 30_000)

  it('frozen, no signal: calls fail with a retryable FS_IO_ERROR at requestTimeoutMs (the write definite: nothing was sent to publish it); after the thaw the same filesystem works', async () => {
    const root = await raw.freshDir(sshd.info.root, 'deadline-')
    const fs = new SftpFileSystem({ ...sshd.info, root, requestTimeoutMs: 1500, readyTimeoutMs: 1000 })
    try {
      const [file, dir] = await Promise.all([fs.resolve('a.txt'), fs.resolve('.')])
      await fs.writeText(file, 'before the freeze')
      const [write, stat, list] = await frozen(async () => {
        const since = performance.now()
        return Promise.all([timed(fs.writeText(file, 'never'), since), timed(fs.stat(file), since), timed(fs.listDir(dir), since)])
      })
      for (const { err, ms } of [write, stat, list]) {
        expect(isFsError(err, 'FS_IO_ERROR') && err.retryable, String(err)).toBe(true)
        // Reads retry once the deadline closed the connection: their reconnect meets the frozen listener (readyTimeoutMs).
        expect(ms).toBeLessThan(1500 + 2000)
      }
      expect((write?.err as Error).message).toContain('the server did not answer for 1500 ms')
      // Its publishing rename was never sent: a definite failure.
      expect(isFsError(write?.err) && write.err.indeterminate).toBe(false)
      expect(write?.ms).toBeGreaterThanOrEqual(1400)

      expect(await fs.readText(file)).toBe('before the freeze')
      await fs.writeText(file, 'after the thaw')
      expect((await fs.listDir(dir)).map((e) => e.name)).toEqual(['a.txt'])
      expect(await fs.readText(file)).toBe('after the thaw')
      expect(await eventually(async () => staging(await raw.names(root)).length === 0, 5000)).toBe(true)
    } finally {
      await fs.close()
    }
  }, 30_000)

  it("an injected client: the deadline closes only seamfs's SFTP channel on it (the client stays the caller's and works after the thaw); the filesystem reconnects with its own", async () => {
    const root = await raw.freshDir(sshd.info.root, 'injected-')
    const client = new Client()
    await new Promise<void>((resolve, reject) => {
      client.once('ready', resolve).once('error', reject)
      client.connect({ host: sshd.info.host, port: sshd.info.port, username: sshd.info.username, privateKey: sshd.info.privateKey })
    })
    client.on('error', () => undefined)
    let clientClosed = false
    client.on('close', () => (clientClosed = true))
    const fs = new SftpFileSystem({ ...sshd.info, root, client, requestTimeoutMs: 1000, readyTimeoutMs: 1000 })
    try {
      const file = await fs.resolve('a.txt')
      await fs.writeText(file, 'through the injected client')
      const { err, ms } = await frozen(async () => timed(fs.stat(file), performance.now()))
      expect(isFsError(err, 'FS_IO_ERROR') && err.retryable, String(err)).toBe(true)
      expect(ms).toBeLessThan(1000 + 2000)
      expect(clientClosed).toBe(false)
      // The caller's client, thawed: a new SFTP channel on it works.
      const sftp = await new Promise<SFTPWrapper>((resolve, reject) => client.sftp((e, s) => (e ? reject(e) : resolve(s))))
      const names = await new Promise<string[]>((resolve, reject) => sftp.readdir(root, (e, list) => (e ? reject(e) : resolve(list.map((x) => x.filename)))))
      expect(names).toEqual(['a.txt'])
      sftp.end()
      // The filesystem goes on over a connection of its own (host and username were given).
      expect(await fs.readText(file)).toBe('through the injected client')
    } finally {
      await fs.close()
      client.end()
    }
  }, 30_000)

  it('the server process of the connection killed during 30 writes: each success landed, each definite failure did not, no torn file', async () => {
    const root = await raw.freshDir(sshd.info.root, 'kill-')
    const fs = new SftpFileSystem({ ...sshd.info, root })
    const N = 30
    const names = Array.from({ length: N }, (_, i) => `f${String(i).padStart(2, '0')}.txt`)
    const previous = new Map<string, string>()
    // Every third target exists: those writes replace it.
    for (const name of names.filter((_, i) => i % 3 === 0)) {
      const text = `previous ${name}\n`
      await raw.writeInPlace(`${root}/${name}`, Buffer.from(text))
      previous.set(name, text)
    }
    const content = (name: string, i: number): string => `${name} new\n`.padEnd(64 * 1024 * (1 + (i % 12)), `${i % 10}`)
    type Outcome = { kind: 'success' } | { kind: 'definite' | 'indeterminate'; err: unknown }
    const outcomes = new Map<string, Outcome>()
    let inFlight = 0
    let done = false
    try {
      const targets = await Promise.all(names.map((name) => fs.resolve(name)))
      const writer = async (queue: number[]): Promise<void> => {
        for (let i = queue.shift(); i !== undefined; i = queue.shift()) {
          const name = names[i] as string
          inFlight++
          try {
            await fs.writeText(targets[i] as (typeof targets)[number], content(name, i))
            outcomes.set(name, { kind: 'success' })
          } catch (err) {
            expect(isFsError(err), String(err)).toBe(true)
            outcomes.set(name, { kind: isFsError(err) && err.indeterminate ? 'indeterminate' : 'definite', err })
          } finally {
            inFlight--
          }
        }
      }
      let kills = 0
      const killer = async (): Promise<void> => {
        while (!done && kills < 8) {
          await sleep(20 + Math.random() * 100)
          if (done || inFlight === 0) continue
          const victim = others().find((c) => c.network !== undefined)
          if (victim !== undefined && killConnection(victim)) kills++
          // Let it reconnect and get some writes through before the next kill.
          await sleep(150)
        }
      }
      const queue = names.map((_, i) => i)
      const killing = killer()
      await Promise.all([writer(queue), writer(queue), writer(queue)])
      done = true
      await killing
      expect(kills).toBeGreaterThan(0)

      const failed = [...outcomes.values()].filter((o) => o.kind !== 'success')
      // At least one kill met a write in flight (the test could fail).
      expect(failed.length).toBeGreaterThan(0)
      for (const o of failed) expect(isFsError((o as { err: unknown }).err, 'FS_IO_ERROR') && (o as { err: { retryable: boolean } }).err.retryable).toBe(true)
      expect(outcomes.size).toBe(N)

      // What is on the server, read over a connection of its own.
      const check = await RawSftp.connect(sshd.info)
      try {
        for (const [i, name] of names.entries()) {
          const now = await check
            .read(`${root}/${name}`)
            .then((b) => b.toString())
            .catch(() => undefined)
          const before = previous.get(name)
          const after = content(name, i)
          const outcome = outcomes.get(name) as Outcome
          if (outcome.kind === 'success') expect(now === after, `${name}: reported written`).toBe(true)
          else if (outcome.kind === 'definite') expect(now === before, `${name}: reported not written (${String(outcome.err)})`).toBe(true)
          else expect(now === before || now === after, `${name}: indeterminate, and neither old nor new`).toBe(true)
        }
        // The next call sweeps what the interrupted writes left.
        await fs.listDir(await fs.resolve('.'))
        expect(await eventually(async () => staging(await check.names(root)).length === 0, 10_000)).toBe(true)
      } finally {
        check.close()
      }
      const tally = { success: 0, definite: 0, indeterminate: 0 }
      for (const o of outcomes.values()) tally[o.kind]++
      console.log(`kill during writes: ${kills} kills, ${JSON.stringify(tally)}`)
    } finally {
      done = true
      await fs.close()
    }
  }, 60_000)
})

/**
 * Attacks on the pipelined SFTP requests: handles closed on every failure
 * and abort, nothing made outside the root when the target's directory was swapped for an outward
 * link after `resolve`.
 */
import { execFileSync } from 'node:child_process'
import { chownSync, mkdirSync, renameSync, statSync, symlinkSync, utimesSync } from 'node:fs'
import { join } from 'node:path'
import { Client } from 'ssh2'
import { beforeEach, describe, expect, inject, it } from 'vitest'
import { codeOf } from '@seamfs/conformance'
import { SftpFileSystem } from '@seamfs/backend-ssh'
import { isFsError, type FsTarget } from '@seamfs/core'
import type { SftpServerInfo } from '../../../test-servers/sftp.js'
import { HINT_MS } from '../src/hints.js'
import { titled } from './helpers.js'
import { CuttingProxy, suiteBehindProxy } from './proxy.js'
import { RawSftp, suiteScratch } from './raw.js'

const server = inject('sftp')

/** A connected client that tracks the handles the server gave it and not yet closed, and can run a hook on each request sent. */
interface HandleClient {
  readonly client: Client
  /** HANDLE replies received minus CLOSE requests sent. */
  open(): number
  /** Called with the SFTP type of each request as it is sent. */
  onSend: ((type: string) => void) | undefined
}

async function handleClient(info: SftpServerInfo): Promise<HandleClient> {
  let handles = 0
  const out: HandleClient = { client: new Client(), open: () => handles, onSend: undefined }
  await new Promise<void>((resolve, reject) => {
    out.client.once('ready', resolve).once('error', reject)
    out.client.connect({
      host: info.host,
      port: info.port,
      username: info.username,
      privateKey: info.privateKey,
      debug: (line) => {
        const sent = /^SFTP: Outbound: (?:Sending|Sent|Buffered) (\S+)/.exec(line)
        if (sent !== null) {
          if (sent[1] === 'CLOSE') handles--
          out.onSend?.(sent[1] as string)
        } else if (line.startsWith('SFTP: Inbound: Received HANDLE')) handles++
      },
    })
  })
  out.client.on('error', () => undefined)
  return out
}

/** Handles still open once the CLOSEs sent without waiting are out (a request behind them is answered after them). */
async function settledHandles(fs: SftpFileSystem, hc: HandleClient): Promise<number> {
  await new Promise((r) => setTimeout(r, 50))
  await fs.listDir(await fs.resolve('.'))
  return hc.open()
}

describe.skipIf(server === null)(titled('SftpFileSystem: attacks on the pipelined requests', server, inject('sftpWhy')), () => {
  let raw: RawSftp
  let base: string
  let root: string
  let hc: HandleClient
  let fs: SftpFileSystem

  suiteScratch(
    server,
    'review-',
    (scratch) => {
      raw = scratch.raw
      base = scratch.base
    },
    (dir) => execFileSync('chmod', ['-R', 'u+rwx', dir]),
  )
  beforeEach(async () => {
    if (server === null) return
    root = await raw.freshDir(base, 'root-')
    hc = await handleClient(server)
    fs = new SftpFileSystem({ client: hc.client, root })
    await fs.connect()
    return async () => {
      await fs.close()
      hc.client.end()
    }
  })

  it('a write refused when its stage cannot be made (read-only directory) closes the OPEN it sent early', async () => {
    await raw.writeInPlace(`${root}/ro/f.txt`, Buffer.from('old\n'))
    await raw.call((cb) => raw.sftp.chmod(`${root}/ro`, 0o555, cb))
    for (let i = 0; i < 5; i++) {
      const t = await fs.resolve('ro/f.txt')
      expect(await codeOf(fs.writeText(t, `new ${i}\n`))).toBe('FS_PERMISSION_DENIED')
      expect(await codeOf(fs.editText(t, { oldString: 'old', newString: 'new', replaceAll: false }))).toBe('FS_PERMISSION_DENIED')
      expect(await codeOf(fs.writeText(t, 'x\n', { expected: { kind: 'replaceIfVersion', version: (await fs.stat(t))!.version } }))).toBe(
        'FS_PERMISSION_DENIED',
      )
    }
    await raw.call((cb) => raw.sftp.chmod(`${root}/ro`, 0o755, cb))
    expect(await settledHandles(fs, hc)).toBe(0)
    expect((await raw.read(`${root}/ro/f.txt`)).toString()).toBe('old\n')
  })

  it(
    'an abort at every request of a write, a guarded write and an edit: old or new content whole, no temp left, every handle closed',
    { timeout: 120_000 },
    async () => {
      const ops = {
        write: (t: Awaited<ReturnType<SftpFileSystem['resolve']>>, signal: AbortSignal) => fs.writeText(t, 'new content\n', { signal }),
        guarded: async (t: Awaited<ReturnType<SftpFileSystem['resolve']>>, signal: AbortSignal) =>
          fs.writeText(t, 'new content\n', { signal, expected: { kind: 'replaceIfVersion', version: (await fs.stat(t))!.version } }),
        edit: (t: Awaited<ReturnType<SftpFileSystem['resolve']>>, signal: AbortSignal) =>
          fs.editText(t, { oldString: 'old', newString: 'new', replaceAll: false }, { signal }),
      }
      const names: string[] = []
      for (const [name, op] of Object.entries(ops)) {
        names.push(`${name}.txt`)
        for (let n = 1; n <= 90; n++) {
          await raw.writeInPlace(`${root}/${name}.txt`, Buffer.from('old content\n'))
          const t = await fs.resolve(`${name}.txt`)
          const ac = new AbortController()
          let sent = 0
          hc.onSend = () => {
            if (++sent === n) ac.abort(new Error('stop'))
          }
          const failure = await op(t, ac.signal).then(
            () => undefined,
            (err: unknown) => err,
          )
          const code = failure === undefined ? 'ok' : isFsError(failure) ? failure.code : (failure as Error).message
          hc.onSend = undefined
          expect(['ok', 'FS_ABORTED'], `${name}, abort at request ${n}`).toContain(code)
          // An aborted call answers at once; its operation cleans up behind it, moments later.
          const clean = async (): Promise<boolean> => JSON.stringify(await raw.names(root)) === JSON.stringify([...names].sort())
          for (let waited = 0; waited < 2000 && !(await clean()); waited += 20) await new Promise((r) => setTimeout(r, 20))
          expect(await raw.names(root), `${name}, abort at request ${n}`).toEqual([...names].sort())
          const content = (await raw.read(`${root}/${name}.txt`)).toString()
          expect(['old content\n', 'new content\n'], `${name}, abort at request ${n}`).toContain(content)
          // A definite FS_ABORTED (not flagged indeterminate) changed nothing, also behind the caller's back.
          if (isFsError(failure) && !failure.indeterminate) expect(content, `${name}, abort at request ${n}: definite`).toBe('old content\n')
          if (failure === undefined) expect(content, `${name}, abort at request ${n}: done`).toBe('new content\n')
          expect(await settledHandles(fs, hc), `${name}, abort at request ${n}`).toBe(0)
        }
      }
    },
  )

  it('a mixed workload with failures of every kind leaves no handle open', async () => {
    await raw.writeInPlace(`${root}/d/a.txt`, Buffer.from('alpha\n'))
    await raw.writeInPlace(`${root}/d/big.txt`, Buffer.alloc(300 * 1024, 0x61))
    for (let i = 0; i < 5; i++) {
      const [a, big, d, gone] = await Promise.all(['d/a.txt', 'd/big.txt', 'd', 'd/none.txt'].map((p) => fs.resolve(p)))
      await Promise.allSettled([
        fs.readText(a!),
        fs.stat(a!),
        fs.readText(d!),
        fs.readText(gone!),
        fs.listDir(a!),
        fs.listDir(gone!),
        fs.readBytes(big!, { maxBytes: 10 }),
        fs.writeText(a!, 'alpha\n', { expected: { kind: 'createIfAbsent' } }),
        fs.writeText(a!, 'alpha\n', { expected: { kind: 'replaceIfVersion', version: 'sha256:forged' as never } }),
        fs.editText(a!, { oldString: 'nowhere', newString: 'x', replaceAll: false }),
        fs.editText(big!, { oldString: 'a', newString: 'b', replaceAll: false }, {}),
        fs.writeText(d!, 'x\n'),
        fs.listDir(d!),
      ])
    }
    expect(await settledHandles(fs, hc)).toBe(0)
    expect((await raw.read(`${root}/d/a.txt`)).toString()).toBe('alpha\n')
  })

  it('a directory swapped for an outward link after resolve: the write makes nothing outside the root', async () => {
    const { uid, gid } = statSync(server!.root)
    const outside = join(base, `outside-${Date.now()}`)
    mkdirSync(outside)
    chownSync(outside, uid, gid)
    await raw.writeInPlace(`${root}/sub/f.txt`, Buffer.from('inside\n'))
    await raw.writeInPlace(`${outside}/f.txt`, Buffer.from('outside\n'))
    // Targets kept from a while ago (a swap within HINT_MS of the resolve is a race, as any swap is).
    const existing = await fs.resolve('sub/f.txt')
    const fresh = await fs.resolve('sub/new.txt')
    renameSync(join(root, 'sub'), join(root, 'sub.real'))
    symlinkSync(outside, join(root, 'sub'))
    const old = new Date(Date.now() - 3_600_000)
    utimesSync(outside, old, old)
    const untouched = statSync(outside).mtimeMs
    await new Promise((r) => setTimeout(r, HINT_MS + 100))
    const ops = [
      () => fs.writeText(existing, 'payload\n'),
      () => fs.writeText(fresh, 'payload\n'),
      () => fs.writeText(fresh, 'payload\n', { expected: { kind: 'createIfAbsent' } }),
      () => fs.editText(existing, { oldString: 'outside', newString: 'payload', replaceAll: false }),
    ]
    for (const op of ops) {
      expect(await codeOf(op())).toBe('FS_SANDBOX_DENIED')
      // An entry made (and removed) in the outside directory moves its mtime.
      expect(statSync(outside).mtimeMs).toBe(untouched)
      expect(await raw.names(outside)).toEqual(['f.txt'])
    }
    expect((await raw.read(`${outside}/f.txt`)).toString()).toBe('outside\n')
  })
})

describe.skipIf(server === null)(titled('SftpFileSystem: the connection cut at every burst of a pipelined write', server, inject('sftpWhy')), () => {
  let proxy: CuttingProxy
  let raw: RawSftp
  let root: string
  let fs: SftpFileSystem
  suiteBehindProxy(server, 'review-cut-', (suite) => ({ proxy, raw, root, fs } = suite))

  it('old or new content whole, FS_IO_ERROR or success, no temp left once reconnected', { timeout: 120_000 }, async () => {
    const ops = {
      write: (t: FsTarget) => fs.writeText(t, 'new content\n'),
      edit: (t: FsTarget) => fs.editText(t, { oldString: 'old', newString: 'new', replaceAll: false }),
      create: async (t: FsTarget) => {
        await raw.unlink(`${root}/create.txt`)
        return fs.writeText(t, 'new content\n', { expected: { kind: 'createIfAbsent' } })
      },
    }
    const names: string[] = []
    for (const [name, op] of Object.entries(ops)) {
      names.push(`${name}.txt`)
      for (const direction of ['up', 'down'] as const) {
        for (let bytes = 1; bytes <= 6_000; bytes += 400) {
          await raw.writeInPlace(`${root}/${name}.txt`, Buffer.from('old content\n'))
          const t = await fs.resolve(`${name}.txt`)
          proxy.cutAfter(direction, bytes)
          const code = await codeOf(op(t))
          proxy.cutAfter(direction, Number.POSITIVE_INFINITY)
          const at = `${name}, cut ${direction} after ${bytes} bytes`
          expect(['ok', 'FS_IO_ERROR'], at).toContain(code)
          // The next call reconnects and sweeps what the cut write left.
          await fs.listDir(await fs.resolve('.'))
          const content = await raw.read(`${root}/${name}.txt`).then(String, () => 'absent')
          expect(name === 'create' ? ['absent', 'new content\n'] : ['old content\n', 'new content\n'], at).toContain(content)
          expect(
            (await raw.names(root)).filter((n) => !(n === 'create.txt' && content === 'absent')),
            at,
          ).toEqual([...names].sort().filter((n) => n !== 'create.txt' || content !== 'absent'))
        }
      }
    }
  })
})

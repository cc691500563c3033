/**
 * A guarded create (`createIfAbsent`, published by `hardlink@openssh.com`) racing another program
 * that creates and removes the same name as fast as it can: the create either lands or loses with
 * `FS_NOT_OBSERVED`, never an unexplained I/O failure. OpenSSH answers a link onto an existing name
 * with a bare FAILURE, and the file that made it fail may be gone again by the time it is looked at.
 * Bounded: the racer stops by itself after {@link RACE_MS}, the creates stop with it.
 */
import { spawn } from 'node:child_process'
import { describe, expect, inject, it } from 'vitest'
import { SftpFileSystem } from '@seamfs/backend-ssh'
import { titled } from './helpers.js'
import { suiteScratch, type RawSftp } from './raw.js'

const server = inject('sftp')
const RACE_MS = 2_500

/** Creates and removes `path` on the local disk (the server's) until the deadline; prints how many rounds. */
const RACER = `
const fs = require('node:fs')
const [path, ms] = process.argv.slice(1)
const deadline = Date.now() + Number(ms)
let rounds = 0
while (Date.now() < deadline) {
  try { fs.writeFileSync(path, 'racer\\n', { flag: 'wx' }) } catch {}
  try { fs.unlinkSync(path) } catch {}
  rounds++
}
process.stdout.write(String(rounds))
`

describe.skipIf(server === null)(titled('SftpFileSystem: a guarded create racing another program on the same name', server, inject('sftpWhy')), () => {
  let raw: RawSftp
  let base: string
  suiteScratch(server, 'create-race-', (scratch) => {
    raw = scratch.raw
    base = scratch.base
  })

  it('each create lands or is FS_NOT_OBSERVED', { timeout: 30_000 }, async () => {
    const root = await raw.freshDir(base, 'root-')
    await raw.call((cb) => raw.sftp.chmod(root, 0o777, cb))
    const fs = new SftpFileSystem({ ...server!, root })
    try {
      const target = await fs.resolve('g.txt')
      const racer = spawn(process.execPath, ['-e', RACER, `${root}/g.txt`, String(RACE_MS)], { stdio: ['ignore', 'pipe', 'inherit'] })
      let rounds = ''
      racer.stdout.on('data', (chunk: Buffer) => (rounds += chunk.toString()))
      const ended = new Promise<void>((resolve) => racer.on('close', () => resolve()))
      const codes = new Map<string, number>()
      const others: string[] = []
      const deadline = Date.now() + RACE_MS
      while (Date.now() < deadline) {
        const outcome = await fs.writeText(target, 'mine\n', { expected: { kind: 'createIfAbsent' } }).then(
          () => 'ok',
          (err: unknown) => {
            const code = String((err as { code?: unknown }).code)
            if (code !== 'FS_NOT_OBSERVED') others.push(`${code}: ${(err as Error).message}`)
            return code
          },
        )
        codes.set(outcome, (codes.get(outcome) ?? 0) + 1)
      }
      await ended
      console.log(`create race: racer ${rounds} rounds; creates ${JSON.stringify(Object.fromEntries(codes))}`)
      expect(Number(rounds), 'the racer ran').toBeGreaterThan(100)
      expect(codes.get('FS_NOT_OBSERVED') ?? 0, 'some creates lost to the racer').toBeGreaterThan(0)
      expect(others).toEqual([])
    } finally {
      await fs.close()
    }
  })
})

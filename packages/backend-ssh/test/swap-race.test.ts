/**
 * A server-side swapper against the root fence: ≥ 5 s, ≥ 1 swap per ms, bounded,
 * stops by itself. The figures are printed; what the client can hold is asserted for the plain
 * server, and everything is 0 for the chrooted user, whose server keeps it in. See the README's
 * "Root scoping under a racing process".
 */
import { chownSync, mkdtempSync, rmSync, statSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll, describe, expect, inject, it } from 'vitest'
import { SftpFileSystem } from '@seamfs/backend-ssh'
import type { SftpServerInfo } from '../../../test-servers/sftp.js'
import { titled } from './helpers.js'
import { attack, report, type Arena, type Figures } from './swap-attack.js'
import { canSwap } from './swapper.js'

const server = inject('sftp')
const jailed = inject('sftpChroot')
const DURATION_MS = 5_000
/** Sleep after each swap: with the sleep's overhead, 3–5 swaps per ms. (0, a tight loop, gives 50–190 per ms.) */
const HOLD_US = 100

const cleanups: (() => void)[] = []
afterAll(() => cleanups.forEach((c) => c()))

/** A fresh directory owned by `uid`, removed after the suite. */
function fresh(parent: string, uid: number, gid: number): string {
  const dir = mkdtempSync(join(parent, 'swap-'))
  chownSync(dir, uid, gid)
  cleanups.push(() => rmSync(dir, { recursive: true, force: true }))
  return dir
}

async function run(title: string, coords: SftpServerInfo, root: string, arena: Arena): Promise<Figures> {
  const fs = new SftpFileSystem({ ...coords, root })
  let figures: Figures
  try {
    figures = await attack(fs, arena, DURATION_MS, HOLD_US)
  } finally {
    await fs.close()
  }
  console.log(report(title, figures))
  expect(figures.swapper.elapsedMs).toBeGreaterThanOrEqual(DURATION_MS)
  expect(figures.swapper.swaps / figures.swapper.elapsedMs).toBeGreaterThanOrEqual(1)
  expect(figures.attempted).toBeGreaterThan(0)
  return figures
}

describe.skipIf(server === null || !canSwap)(titled('the root under a server-side swapper', server, inject('sftpWhy')), () => {
  it('plain server: no temp file, no byte written outside; no outside byte returned or copied in', { timeout: 60_000 }, async () => {
    if (server === null) return
    const { uid, gid } = statSync(server.root)
    const base = fresh(server.root, uid, gid)
    const outside = join(base, 'outside')
    const f = await run('SFTP, plain server', server, join(base, 'root'), { hostRoot: join(base, 'root'), hostOutside: outside, uid, gid, linkTarget: outside })
    expect(f.tempsOutside).toBe(0)
    expect([f.writesOutside, f.bytesOutside]).toEqual([0, 0])
    // A removal or move names its entries through a stage that exists only inside: none reaches out.
    expect(f.removedOutside).toBe(0)
    expect(f.outsideBytesReturned).toBe(0)
    expect(f.copiedIn).toBe(0)
  })

  it('chrooted user (ChrootDirectory): nothing outside the jail is reached at all', { timeout: 60_000 }, async () => {
    if (jailed === null) return
    const { uid, gid } = statSync(jailed.hostRoot)
    const base = fresh(jailed.hostRoot, uid, gid)
    // Outside the jail on this machine; the link names it by its real path, which the jailed server cannot reach.
    const outside = fresh(tmpdir(), uid, gid)
    const root = `${jailed.root}/${base.slice(jailed.hostRoot.length + 1)}/root`
    const f = await run('SFTP, chrooted user', jailed, root, { hostRoot: join(base, 'root'), hostOutside: outside, uid, gid, linkTarget: outside })
    expect(f.tempsOutside).toBe(0)
    expect([f.writesOutside, f.bytesOutside, f.emptyFilesOutside, f.replacedOutside, f.removedOutside, f.dirsOutside]).toEqual([0, 0, 0, 0, 0, 0])
    expect(f.outsideBytesReturned).toBe(0)
    expect(f.copiedIn).toBe(0)
  })
})

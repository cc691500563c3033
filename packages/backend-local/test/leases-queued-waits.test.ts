/**
 * The in-process FIFO mutex sits in front of the lease wait and ignores the caller's abort
 * signal and wait bound. While one caller of a key polls a lock entry another process holds, every
 * later caller of that key in this process waits behind it: an abort is not seen until the callers
 * ahead have given up, and the N-th caller fails after N × lockWaitMs, not lockWaitMs.
 */
import { symlinkSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { describe, expect, it } from 'vitest'
import { isFsError } from '@seamfs/core'
import { formatLeaseRecord } from '@seamfs/core/backend'
import { LocalFileSystem } from '@seamfs/backend-local'
import { lockNameOf } from '../src/leases.js'
import { scratchDir } from './scratch.js'

/** A workspace whose f.txt is locked by a live holder on another machine (fresh entry, long lease). */
function heldElsewhere(): string {
  const root = scratchDir('review-queue')
  writeFileSync(join(root, 'f.txt'), 'one\n')
  symlinkSync(formatLeaseRecord({ host: 'abcdef012345', pid: 4242, nonce: 'a'.repeat(16), leaseMs: 60_000 }), join(root, lockNameOf('f.txt')))
  return root
}

async function outcome(work: Promise<unknown>): Promise<{ code: string; ms: number }> {
  const started = Date.now()
  try {
    await work
    return { code: 'ok', ms: Date.now() - started }
  } catch (err) {
    return { code: isFsError(err) ? err.code : String(err), ms: Date.now() - started }
  }
}

describe('waits queued behind another caller of the same key in this process', () => {
  it('an abort ends a queued wait promptly (FS_ABORTED within ~the abort time, not after the caller ahead gives up)', async () => {
    const root = heldElsewhere()
    const first = new LocalFileSystem({ cwd: root, lockWaitMs: 1500 })
    const second = new LocalFileSystem({ cwd: root, lockWaitMs: 1500 })
    const t = await first.resolve('f.txt')
    const ahead = outcome(first.editText(t, { oldString: 'one', newString: 'two', replaceAll: false }))
    await new Promise((r) => setTimeout(r, 20))
    const aborted = await outcome(second.editText(t, { oldString: 'one', newString: 'three', replaceAll: false }, { signal: AbortSignal.timeout(100) }))
    expect((await ahead).code).toBe('FS_IO_ERROR')
    expect(aborted.code).toBe('FS_ABORTED')
    expect(aborted.ms, 'the abort fired at 100 ms; the caller was still queued behind the first wait').toBeLessThan(700)
  })

  it('lockWaitMs bounds each caller: the third queued caller does not wait three times as long', async () => {
    const root = heldElsewhere()
    const fss = [0, 1, 2].map(() => new LocalFileSystem({ cwd: root, lockWaitMs: 600 }))
    const t = await fss[0]!.resolve('f.txt')
    const results = await Promise.all(fss.map((fs, i) => outcome(fs.editText(t, { oldString: 'one', newString: `x${i}`, replaceAll: false }))))
    for (const r of results) expect(r.code).toBe('FS_IO_ERROR')
    const slowest = Math.max(...results.map((r) => r.ms))
    expect(slowest, `waits: ${results.map((r) => r.ms).join(', ')} ms for lockWaitMs 600`).toBeLessThan(1200)
  })
})

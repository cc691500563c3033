/**
 * The sandbox's root pins under adversity: a first use shared by callers that
 * abort one after another, and a relative writable root that first resolves after the workspace
 * root was swapped for a link to elsewhere.
 */
import { describe, expect, it } from 'vitest'
import { FsError, isFsError, SandboxedFileSystem, type FsTarget } from '@seamfs/core'
import { MemoryFileSystem } from '@seamfs/backend-memory'

/** A memory backend whose resolve of `gated` waits until released, and honours its signal. */
class Gated extends MemoryFileSystem {
  gated = ''
  waiting = 0
  #release: (() => void)[] = []

  release(): void {
    for (const go of this.#release.splice(0)) go()
  }

  protected override async resolvePath(path: string, cwd: string | undefined, signal?: AbortSignal): Promise<FsTarget> {
    if (path === this.gated) {
      this.waiting++
      await new Promise<void>((resolve, reject) => {
        this.#release.push(resolve)
        signal?.addEventListener('abort', () => reject(FsError.aborted('resolve', signal.reason)), { once: true })
      })
    }
    return super.resolvePath(path, cwd)
  }
}

const flush = async (): Promise<void> => {
  for (let i = 0; i < 20; i++) await new Promise((resolve) => setImmediate(resolve))
}

async function outcome(op: () => Promise<unknown>): Promise<string> {
  try {
    await op()
    return 'ok'
  } catch (err) {
    return isFsError(err) ? err.code : String(err)
  }
}

describe('sandbox root pins', () => {
  it('a caller that never aborts is not failed by the aborts of the callers it shared the first resolution with', async () => {
    const inner = new Gated({ cwd: '/t', files: { 'ws/a.txt': 'inside\n' } })
    inner.gated = '/t/ws'
    const fs = new SandboxedFileSystem(inner, { mode: 'workspace-write', workspaceRoot: '/t/ws' })
    const target = await fs.resolve('a.txt')
    const a = new AbortController()
    const b = new AbortController()
    const first = outcome(() => fs.readText(target, { signal: a.signal }))
    const second = outcome(() => fs.readText(target, { signal: b.signal }))
    const third = fs.readText(target).catch((err: unknown) => (isFsError(err) ? err.code : String(err)))
    await flush()
    a.abort()
    await flush()
    b.abort()
    await flush()
    inner.release()
    expect(await first).toBe('FS_ABORTED')
    expect(await second).toBe('FS_ABORTED')
    expect(await third).toBe('inside\n')
  })

  it('a relative writable root resolving only after the workspace root was swapped for a link is not pinned outside', async () => {
    const inner = new MemoryFileSystem({ cwd: '/t', files: { 'ws/a.txt': 'inside\n', 'ws/build': 'a file on the way\n', 'outside/build/out/x': 'outside\n' } })
    const fs = new SandboxedFileSystem(inner, { mode: 'workspace-write', workspaceRoot: '/t/ws', writableRoots: ['build/out'] })
    expect(await fs.readText(await fs.resolve('a.txt'))).toBe('inside\n')
    inner.volume.renameSync('/t/ws', '/t/ws-old')
    inner.volume.symlinkSync('/t/outside', '/t/ws')
    expect(await outcome(async () => fs.writeText(await fs.resolve('/t/outside/build/out/x'), 'agent\n'))).toBe('FS_SANDBOX_DENIED')
    expect(await outcome(async () => fs.readText(await fs.resolve('/t/outside/build/out/x')))).toBe('FS_SANDBOX_DENIED')
    expect(inner.volume.readFileSync('/t/outside/build/out/x', 'utf8')).toBe('outside\n')
  })
})

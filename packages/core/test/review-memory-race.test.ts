/**
 * Review of the speculative read fence (`#reading`) on the memory backend: the model's own
 * concurrent calls (renames through the same sandbox) put a directory holding a link that leads
 * out of the workspace where a directory of the workspace was, and back, while reads of a path
 * through it are in flight. Bounded in rounds; no outside byte or size may come back.
 */
import { describe, expect, it } from 'vitest'
import { SandboxedFileSystem } from '@seamfs/core'
import { MemoryFileSystem } from '@seamfs/backend-memory'

const SECRET = 'SECRET-OUTSIDE-CONTENT-0123456789-abcdefghijklmnop\n'
const INSIDE = 'inside-content\n'

const tick = async (n: number): Promise<void> => {
  for (let i = 0; i < n; i++) await Promise.resolve()
}

async function drain(it: AsyncIterable<Uint8Array>): Promise<string> {
  const parts: Buffer[] = []
  for await (const c of it) parts.push(Buffer.from(c))
  return Buffer.concat(parts).toString('utf8')
}

describe('review: memory backend, a link-holding directory renamed into place during reads', () => {
  it('model renames through the sandbox never let a read through the link hand out outside bytes', async () => {
    const inner = new MemoryFileSystem({
      cwd: '/w',
      files: { 'a/x': { symlink: '/out' }, 'b/x/f': INSIDE },
    })
    inner.volume.mkdirSync('/out', { recursive: true })
    inner.volume.writeFileSync('/out/f', SECRET)
    const fs = new SandboxedFileSystem(inner, { mode: 'workspace-write', workspaceRoot: '/w' })
    // The link alone is fenced.
    await expect(fs.readText(await fs.resolve('a/x/f'))).rejects.toMatchObject({ code: 'FS_SANDBOX_DENIED' })
    const seen: string[] = []
    let served = 0
    let swaps = 0
    let stop = false
    const swapper = (async () => {
      for (let i = 0; i < 20_000 && !stop; i++) {
        try {
          await fs.rename(await fs.resolve('b'), await fs.resolve('c'))
          await tick(i % 7)
          await fs.rename(await fs.resolve('a'), await fs.resolve('b'))
          await tick(i % 5)
          await fs.rename(await fs.resolve('b'), await fs.resolve('a'))
          await tick(i % 3)
          await fs.rename(await fs.resolve('c'), await fs.resolve('b'))
          swaps++
        } catch (err) {
          seen.push(`swapper failed: ${String(err)}`)
          return
        }
      }
    })()
    const attempt = async (what: string, op: () => Promise<string>): Promise<void> => {
      try {
        const text = await op()
        served++
        if (text.includes('SECRET') || text.includes(`"size":${SECRET.length}`)) seen.push(`${what}: ${text.slice(0, 100)}`)
      } catch {
        // refused or missing: fine
      }
    }
    const reader = async (offset: number): Promise<void> => {
      for (let i = 0; i < 20_000 && !stop; i++) {
        await tick((i + offset) % 11)
        await attempt('readText', async () => fs.readText(await fs.resolve('b/x/f')))
        await attempt('openFile', async () => {
          const f = await fs.openFile(await fs.resolve('b/x/f'))
          return `${JSON.stringify(f.info)}${await drain(f.chunks)}`
        })
        await attempt('streamBytes', async () => drain(await fs.streamBytes(await fs.resolve('b/x/f'))))
        await attempt('stat', async () => JSON.stringify(await fs.stat(await fs.resolve('b/x/f'))))
        await attempt('listDir', async () => JSON.stringify(await fs.listDir(await fs.resolve('b/x'))))
      }
    }
    await Promise.all([reader(0), reader(3), reader(6)].map((p) => p.finally(() => (stop = true))))
    stop = true
    await swapper
    expect(swaps).toBeGreaterThan(10)
    expect(served).toBeGreaterThan(100)
    expect(seen).toEqual([])
  }, 60_000)
})

/**
 * The sandbox's remembered resolves (`resolveMemoryMs`): a path resolved again costs the store no
 * request, and a remembered answer made stale by a change of links is never acted on, because every
 * operation re-resolves its target behind the fence.
 */
import { describe, expect, it } from 'vitest'
import { SandboxedFileSystem, type FsTarget, type SandboxOptions } from '@seamfs/core'
import { MemoryFileSystem } from '@seamfs/backend-memory'

/** A memory store that counts the resolves it is asked for. */
class CountingMemory extends MemoryFileSystem {
  resolves = 0
  protected override resolvePath(...args: Parameters<MemoryFileSystem['resolvePath']>): ReturnType<MemoryFileSystem['resolvePath']> {
    this.resolves++
    return super.resolvePath(...args)
  }
}

function setup(options: Partial<SandboxOptions> = {}): { inner: CountingMemory; fs: SandboxedFileSystem } {
  const inner = new CountingMemory({ cwd: '/w', files: { 'd/f.txt': 'inside\n', 'e/g.txt': 'g\n' } })
  inner.volume.mkdirSync('/out/d', { recursive: true })
  inner.volume.writeFileSync('/out/d/f.txt', 'SECRET\n')
  const fs = new SandboxedFileSystem(inner, { mode: 'workspace-write', workspaceRoot: '/w', ...options })
  return { inner, fs }
}

const codeOf = (p: Promise<unknown>): Promise<string> =>
  p.then(
    () => 'ok',
    (err: unknown) => String((err as { code?: unknown }).code),
  )

describe('SandboxedFileSystem: remembered resolves', () => {
  it('at most 4,096 resolves are remembered, across bases: past that all are forgotten and resolved again', async () => {
    const { inner, fs } = setup()
    // Two bases, so the bound counts entries of every base, not bases.
    for (let i = 0; i < 4096; i++) await fs.resolve(`n${i}.txt`, { cwd: i % 2 === 0 ? '/w' : '/w/d' })
    let before = inner.resolves
    await fs.resolve('n0.txt', { cwd: '/w' })
    await fs.resolve('n1.txt', { cwd: '/w/d' })
    expect(inner.resolves).toBe(before) // all 4,096 remembered
    await fs.resolve('one-more.txt') // the 4,097th: forgets every earlier one
    before = inner.resolves
    await fs.resolve('n0.txt', { cwd: '/w' })
    await fs.resolve('n1.txt', { cwd: '/w/d' })
    expect(inner.resolves).toBe(before + 2)
  })

  it('the same path from the same base resolves once; another path or base resolves again', async () => {
    const { inner, fs } = setup()
    const first = await fs.resolve('d/f.txt')
    const before = inner.resolves
    expect(await fs.resolve('d/f.txt')).toEqual(first)
    expect(inner.resolves).toBe(before)
    await fs.resolve('e/g.txt')
    await fs.resolve('f.txt', { cwd: '/w/d' })
    expect(inner.resolves).toBe(before + 2)
  })

  it('a directory swapped for an outward link after the resolve: the remembered target reads, stats, lists and writes nothing outside', async () => {
    const { inner, fs } = setup()
    const [file, dir] = [await fs.resolve('d/f.txt'), await fs.resolve('d')]
    inner.volume.renameSync('/w/d', '/w/d.real')
    inner.volume.symlinkSync('/out/d', '/w/d')
    // Remembered: the same (now stale) answer, without a request.
    expect((await fs.resolve('d/f.txt')).targetKey).toBe(file.targetKey)
    for (const call of [
      fs.readText(file),
      fs.stat(file),
      fs.streamBytes(file),
      fs.openFile(file),
      fs.listDir(dir),
      fs.writeText(file, 'x\n'),
      fs.editText(file, [{ oldString: 'SECRET', newString: 'x', replaceAll: false }]),
      fs.remove(file),
    ]) {
      expect(await codeOf(call)).toBe('FS_SANDBOX_DENIED')
    }
    expect(inner.volume.readFileSync('/out/d/f.txt', 'utf8')).toBe('SECRET\n')
    expect(inner.volume.readFileSync('/w/d.real/f.txt', 'utf8')).toBe('inside\n')
  })

  it('a path that leads elsewhere inside the roots now: the operation acts where it leads now', async () => {
    const { inner, fs } = setup()
    const stale: FsTarget = await fs.resolve('d/f.txt')
    inner.volume.renameSync('/w/d', '/w/d.old')
    inner.volume.symlinkSync('/w/e', '/w/d')
    inner.volume.writeFileSync('/w/e/f.txt', 'moved here\n')
    expect(await fs.readText(stale)).toBe('moved here\n')
    await fs.writeText(stale, 'written\n')
    expect(inner.volume.readFileSync('/w/e/f.txt', 'utf8')).toBe('written\n')
    expect(inner.volume.readFileSync('/w/d.old/f.txt', 'utf8')).toBe('inside\n')
  })

  it('a remove or a rename through the sandbox forgets every remembered resolve', async () => {
    const { inner, fs } = setup()
    await fs.resolve('d/f.txt')
    await fs.resolve('e/g.txt')
    await fs.rename(await fs.resolve('e/g.txt'), await fs.resolve('e/h.txt'))
    let count = inner.resolves
    await fs.resolve('d/f.txt')
    expect(inner.resolves).toBe(count + 1)
    await fs.remove(await fs.resolve('e/h.txt'))
    count = inner.resolves
    await fs.resolve('d/f.txt')
    expect(inner.resolves).toBe(count + 1)
  })

  it('resolveMemoryMs 0, full access and unconfined reads resolve every time; a bad value is a RangeError', async () => {
    for (const options of [{ resolveMemoryMs: 0 }, { mode: 'full-access' as const }, { confineReads: false }]) {
      const { inner, fs } = setup(options)
      await fs.resolve('d/f.txt')
      const count = inner.resolves
      await fs.resolve('d/f.txt')
      expect(inner.resolves, JSON.stringify(options)).toBeGreaterThan(count)
    }
    for (const bad of [-1, Number.NaN, Number.POSITIVE_INFINITY]) {
      expect(() => setup({ resolveMemoryMs: bad })).toThrow(RangeError)
    }
  })

  it('a failed resolve is not remembered', async () => {
    const { inner, fs } = setup()
    await fs.writeText(await fs.resolve('plain.txt'), 'file\n')
    expect(await codeOf(fs.resolve('plain.txt/below'))).not.toBe('ok')
    const count = inner.resolves
    expect(await codeOf(fs.resolve('plain.txt/below'))).not.toBe('ok')
    expect(inner.resolves).toBeGreaterThan(count)
  })
})

/**
 * The sandbox over a store whose reads are bound to the key (`capabilities.keyBoundReads`): a read of
 * a target named by its own key goes without re-resolving its path first. It must decide exactly as
 * the full way does (re-resolve, then read where the path leads now, or refuse), whatever was swapped
 * for a link since the target was resolved: checked against the same sandbox over the same store with
 * the capability hidden, on the local disk and in memory.
 */
import { mkdirSync, mkdtempSync, realpathSync, renameSync, rmSync, symlinkSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterEach, describe, expect, it } from 'vitest'
import { SandboxedFileSystem, type FileSystem, type FsCapabilities, type FsTarget } from '@seamfs/core'
import { FileSystemLayer } from '@seamfs/core/backend'
import { LocalFileSystem } from '@seamfs/backend-local'
import { MemoryFileSystem } from '@seamfs/backend-memory'

/** The store as it is, with `keyBoundReads` hidden: the sandbox over it re-resolves every read. */
class Unbound extends FileSystemLayer {
  override get capabilities(): FsCapabilities {
    return { ...this.inner.capabilities, keyBoundReads: false }
  }
}

/** Counts the resolves the sandbox asks of the store; reads go through as they are. */
class Counting extends FileSystemLayer {
  resolves = 0
  protected override readsThrough(): boolean {
    return true
  }

  protected override resolvePath(...args: Parameters<FileSystemLayer['resolvePath']>): ReturnType<FileSystemLayer['resolvePath']> {
    this.resolves++
    return super.resolvePath(...args)
  }
}

/** A store with `/w` (the root) and `/out`, and how to change it behind the filesystem's back. */
interface Place {
  readonly fs: FileSystem
  readonly root: string
  readonly out: string
  write(path: string, text: string): void
  rename(from: string, to: string): void
  symlink(path: string, to: string): void
  unlink(path: string): void
}

const cleanups: (() => void)[] = []
afterEach(() => cleanups.splice(0).forEach((f) => f()))

function local(): Place {
  const base = realpathSync(mkdtempSync(join(tmpdir(), 'seamfs-key-bound-')))
  cleanups.push(() => rmSync(base, { recursive: true, force: true }))
  const at = (p: string): string => join(base, p)
  return {
    fs: new LocalFileSystem({ cwd: at('w') }),
    root: at('w'),
    out: at('out'),
    write: (p, text) => {
      mkdirSync(join(at(p), '..'), { recursive: true })
      writeFileSync(at(p), text)
    },
    rename: (from, to) => renameSync(at(from), at(to)),
    symlink: (p, to) => symlinkSync(to.startsWith('/') ? at(to.slice(1)) : to, at(p)),
    unlink: (p) => rmSync(at(p)),
  }
}

function memory(): Place {
  const fs = new MemoryFileSystem({ cwd: '/w' })
  const at = (p: string): string => `/${p}`
  return {
    fs,
    root: '/w',
    out: '/out',
    write: (p, text) => {
      fs.volume.mkdirSync(at(p).slice(0, at(p).lastIndexOf('/')), { recursive: true })
      fs.volume.writeFileSync(at(p), text)
    },
    rename: (from, to) => fs.volume.renameSync(at(from), at(to)),
    symlink: (p, to) => fs.volume.symlinkSync(to.startsWith('/') ? at(to.slice(1)) : to, at(p)),
    unlink: (p) => fs.volume.unlinkSync(at(p)),
  }
}

/** What every read of `target` (and a listing of `dir`) answers: its content, or its code. */
async function reads(fs: FileSystem, target: FsTarget, dir: FsTarget): Promise<string[]> {
  const settle = (p: Promise<unknown>): Promise<string> =>
    p.then(
      (value) => JSON.stringify(value),
      (err: unknown) => String((err as { code?: unknown }).code),
    )
  const drain = async (chunks: AsyncIterable<Uint8Array> | Iterable<Uint8Array>): Promise<string> => {
    let text = ''
    for await (const chunk of chunks) text += Buffer.from(chunk).toString()
    return text
  }
  return [
    await settle(fs.readText(target)),
    await settle(fs.readBytes(target).then((b) => Buffer.from(b).toString())),
    await settle(fs.stat(target).then((info) => info?.size)),
    await settle(
      fs.openFile(target).then(async (file) => {
        try {
          return await drain(file.chunks)
        } finally {
          await file.close()
        }
      }),
    ),
    await settle(fs.streamBytes(target).then(drain)),
    await settle(fs.listDir(dir).then((entries) => entries.map((e) => e.name))),
  ]
}

/** How the store changes after the targets were resolved. */
const SWAPS: Record<string, (p: Place) => void> = {
  'nothing changes': () => undefined,
  'the directory is swapped for a link out of the roots': (p) => {
    p.rename('w/d', 'w/d.real')
    p.symlink('w/d', '/out/d')
  },
  'the directory is swapped for a link to another inside': (p) => {
    p.rename('w/d', 'w/d.real')
    p.symlink('w/d', 'e')
  },
  'the file is swapped for a link out of the roots': (p) => {
    p.rename('w/d/f.txt', 'w/d/f.real')
    p.symlink('w/d/f.txt', '/out/d/f.txt')
  },
  'the file is swapped for a link to another inside': (p) => {
    p.rename('w/d/f.txt', 'w/d/f.real')
    p.symlink('w/d/f.txt', '../e/f.txt')
  },
  'the file is removed': (p) => p.rename('w/d/f.txt', 'w/f.gone'),
}

describe.each([
  ['local disk', local],
  ['memory', memory],
] as const)('SandboxedFileSystem over key-bound reads: %s', (_name, make) => {
  it('the store declares key-bound reads', () => {
    expect(make().fs.capabilities.keyBoundReads).toBe(process.platform === 'linux' || _name === 'memory')
  })

  for (const [swap, apply] of Object.entries(SWAPS)) {
    it(`decides every read as the full way does when ${swap}`, async () => {
      const place = make()
      for (const [p, text] of [
        ['w/d/f.txt', 'inside\n'],
        ['w/d/g.txt', 'g\n'],
        ['w/e/f.txt', 'other inside\n'],
        ['out/d/f.txt', 'SECRET\n'],
      ] as const) {
        place.write(p, text)
      }
      const bound = new SandboxedFileSystem(place.fs, { mode: 'workspace-write', workspaceRoot: place.root })
      const full = new SandboxedFileSystem(new Unbound(place.fs), { mode: 'workspace-write', workspaceRoot: place.root })
      const targets = await Promise.all([bound, full].map(async (fs) => [await fs.resolve('d/f.txt'), await fs.resolve('d')] as const))
      apply(place)
      const [viaBound, viaFull] = [await reads(bound, ...targets[0]!), await reads(full, ...targets[1]!)]
      expect(viaBound).toEqual(viaFull)
      // Nothing of the outside reached the caller either way.
      expect(viaBound.join(' ')).not.toContain('SECRET')
    })
  }

  it('a target resolved through a link that now points elsewhere is read where the path leads now, as the full way does', async () => {
    const place = make()
    place.write('w/d/f.txt', 'inside\n')
    place.write('w/e/f.txt', 'other inside\n')
    place.symlink('w/link.txt', 'd/f.txt')
    const bound = new SandboxedFileSystem(place.fs, { mode: 'workspace-write', workspaceRoot: place.root })
    const full = new SandboxedFileSystem(new Unbound(place.fs), { mode: 'workspace-write', workspaceRoot: place.root })
    const [a, b] = [await bound.resolve('link.txt'), await full.resolve('link.txt')]
    place.unlink('w/link.txt')
    place.symlink('w/link.txt', 'e/f.txt')
    expect(await bound.readText(a)).toBe('other inside\n')
    expect(await full.readText(b)).toBe('other inside\n')
  })

  it('a read of a target named by its own key asks the store for no resolve; one through a link does', async () => {
    const place = make()
    place.write('w/d/f.txt', 'inside\n')
    place.symlink('w/link.txt', 'd/f.txt')
    const counting = new Counting(place.fs)
    const fs = new SandboxedFileSystem(counting, { mode: 'workspace-write', workspaceRoot: place.root })
    const [direct, linked] = [await fs.resolve('d/f.txt'), await fs.resolve('link.txt')]
    // The first check pins the roots (a resolve each); counted after it.
    expect(await fs.readText(direct)).toBe('inside\n')
    const before = counting.resolves
    expect(await fs.readText(direct)).toBe('inside\n')
    expect(counting.resolves).toBe(before)
    expect(await fs.readText(linked)).toBe('inside\n')
    expect(counting.resolves).toBeGreaterThan(before)
  })

  it('a forged target whose key is relative or not normalized is decided the full way: nothing outside is read', async () => {
    const place = make()
    place.write('w/d/f.txt', 'inside\n')
    place.write('out/d/f.txt', 'SECRET\n')
    const bound = new SandboxedFileSystem(place.fs, { mode: 'workspace-write', workspaceRoot: place.root })
    const full = new SandboxedFileSystem(new Unbound(place.fs), { mode: 'workspace-write', workspaceRoot: place.root })
    const outside = place.out.slice(1)
    for (const key of [`${outside}/d/f.txt`, `${place.root}/../out/d/f.txt`, `${place.root}/./d/f.txt`, `${place.root}//d/f.txt`, `${place.root}/d/`]) {
      const forged = { targetKey: key, displayPath: key } as unknown as FsTarget
      const [viaBound, viaFull] = [await reads(bound, forged, forged), await reads(full, forged, forged)]
      expect(viaBound, key).toEqual(viaFull)
      expect(viaBound.join(' '), key).not.toContain('SECRET')
    }
  })
})

describe('a forged relative key over memory, whose root holds the process cwd', () => {
  it('is decided the full way: the store never reads the key from its own root', async () => {
    // memory's `contains` takes a relative key against the process cwd; its reads take it from `/`.
    const cwd = process.cwd()
    const fs = new MemoryFileSystem({ files: { [`${cwd}/inside.txt`]: 'in', '/secret.txt': 'SECRET' } })
    const sandbox = new SandboxedFileSystem(fs, { mode: 'workspace-write', workspaceRoot: cwd })
    expect(await sandbox.readText(await sandbox.resolve('inside.txt'))).toBe('in')
    const forged = { targetKey: 'secret.txt', displayPath: 'secret.txt' } as unknown as FsTarget
    for (const read of [sandbox.readText(forged), sandbox.readBytes(forged).then((b) => Buffer.from(b).toString())]) {
      expect(
        await read.then(
          (text) => text,
          (err: unknown) => String((err as { code?: unknown }).code),
        ),
      ).not.toContain('SECRET')
    }
  })
})

describe('layers and key-bound reads', () => {
  it('a layer passes the claim on only where it reads through; a fence never does', async () => {
    const { EventedFileSystem } = await import('@seamfs/core')
    const { TracedFileSystem } = await import('@seamfs/core/opentelemetry')
    const fs = new MemoryFileSystem({ cwd: '/w' })
    expect(fs.capabilities.keyBoundReads).toBe(true)
    expect(new Unbound(fs).capabilities.keyBoundReads).toBe(false)
    class Plain extends FileSystemLayer {}
    expect(new Plain(fs).capabilities.keyBoundReads).toBe(false)
    const plain = new Plain(fs)
    // Made once for the store's capabilities object (the sandbox reads them on every read).
    expect(plain.capabilities).toBe(plain.capabilities)
    expect(new EventedFileSystem(fs).capabilities.keyBoundReads).toBe(true)
    expect(new TracedFileSystem(fs).capabilities.keyBoundReads).toBe(true)
    expect(new SandboxedFileSystem(fs, { mode: 'workspace-write', workspaceRoot: '/w' }).capabilities.keyBoundReads).toBe(false)
    // Every other capability is the store's.
    const { keyBoundReads: _a, ...rest } = new Plain(fs).capabilities
    const { keyBoundReads: _b, ...own } = fs.capabilities
    expect(rest).toEqual(own)
  })
})

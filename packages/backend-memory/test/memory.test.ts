import nodeFs, { existsSync, readdirSync } from 'node:fs'
import { syncBuiltinESMExports } from 'node:module'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { vol as globalVol } from 'memfs'
import { describe, expect, it } from 'vitest'
import { FS_ERROR_CODES, isFsError } from '@seamfs/core'
import { MemoryFileSystem } from '@seamfs/backend-memory'
import { memoryBackend } from '@seamfs/backend-memory/config'
import { translateError } from '@seamfs/core/backend'
import { MEMFS_ERROR_TABLE, memfsErrorRow } from '../src/errors.js'

const modeOf = (fs: MemoryFileSystem, path: string): number => Number(fs.volume.statSync(path).mode) & 0o777
const toFsError = (err: unknown, verb: 'read' | 'write', path: string) => translateError(err, verb, path, memfsErrorRow)

describe('seeding and toJSON', () => {
  it('round-trips files, empty directories, symlinks, modes and binary content', () => {
    const files = {
      'src/a.ts': 'export const a = 1\n',
      'src/b/c.md': '# 中文 🐂\r\n',
      'empty/': null,
      'bin/tool.sh': { content: '#!/bin/sh\n', mode: 0o755 },
      'blob.dat': Uint8Array.of(0xff, 0x00, 0xfe),
      'link.ts': { symlink: 'src/a.ts' },
      'bom.txt': '\uFEFFwith bom',
    }
    const fs = new MemoryFileSystem({ files })
    const snapshot = fs.toJSON()
    expect(snapshot).toEqual({
      'bin/tool.sh': { content: '#!/bin/sh\n', mode: 0o755 },
      'blob.dat': Uint8Array.of(0xff, 0x00, 0xfe),
      'bom.txt': '\uFEFFwith bom',
      'empty/': null,
      'link.ts': { symlink: 'src/a.ts' },
      'src/a.ts': 'export const a = 1\n',
      'src/b/c.md': '# 中文 🐂\r\n',
    })
    expect(Object.keys(snapshot)).toEqual(Object.keys(snapshot).sort())
    expect(new MemoryFileSystem({ files: snapshot }).toJSON()).toEqual(snapshot)
  })

  it('seeds relative to cwd and snapshots relative to it', async () => {
    const fs = new MemoryFileSystem({ cwd: '/repo', files: { 'a.txt': 'A' } })
    expect(fs.volume.readFileSync('/repo/a.txt', 'utf8')).toBe('A')
    await fs.writeText(await fs.resolve('dir/b.txt'), 'B')
    expect(fs.toJSON()).toEqual({ 'a.txt': 'A', 'dir/b.txt': 'B' })
  })

  it('reads through a seeded symlink and writes land on its target, keeping the link', async () => {
    const fs = new MemoryFileSystem({ files: { 'real.txt': 'one', 'link.txt': { symlink: 'real.txt' } } })
    const link = await fs.resolve('link.txt')
    expect(await fs.readText(link)).toBe('one')
    await fs.writeText(link, 'two')
    expect(fs.toJSON()).toEqual({ 'link.txt': { symlink: 'real.txt' }, 'real.txt': 'two' })
  })
})

describe('instances', () => {
  it('each instance has its own Volume, and the global memfs vol is never touched', async () => {
    const before = JSON.stringify(globalVol.toJSON())
    const a = new MemoryFileSystem({ files: { 'x.txt': 'a' } })
    const b = new MemoryFileSystem()
    await a.writeText(await a.resolve('y.txt'), 'y')
    expect(b.toJSON()).toEqual({})
    expect(a.volume).not.toBe(b.volume)
    expect(a.volume).not.toBe(globalVol)
    expect(JSON.stringify(globalVol.toJSON())).toBe(before)
  })

  it('an injected clock makes timestamps deterministic', async () => {
    let now = Date.UTC(2030, 0, 1)
    const fs = new MemoryFileSystem({ clock: () => now })
    const t = await fs.resolve('a.txt')
    await fs.writeText(t, 'one')
    expect(fs.volume.statSync('/a.txt').mtimeMs).toBe(now)
    now += 1234
    await fs.editText(t, { oldString: 'one', newString: 'two', replaceAll: false })
    expect(fs.volume.statSync('/a.txt').mtimeMs).toBe(now)
  })

  it('new files are 0600 by default, as on the local and SFTP backends, and so are seeded strings', async () => {
    const fs = new MemoryFileSystem({ files: { 'seed.txt': 's' } })
    await fs.writeText(await fs.resolve('new.txt'), 'n')
    expect([modeOf(fs, '/new.txt'), modeOf(fs, '/seed.txt')]).toEqual([0o600, 0o600])
    expect(fs.toJSON()).toEqual({ 'new.txt': 'n', 'seed.txt': 's' })
  })

  it('new files take newFileMode; existing files keep their mode', async () => {
    const fs = new MemoryFileSystem({ newFileMode: 0o640, files: { 'run.sh': { content: 'x', mode: 0o755 } } })
    await fs.writeText(await fs.resolve('new.txt'), 'n')
    await fs.writeText(await fs.resolve('run.sh'), 'y')
    expect(modeOf(fs, '/new.txt')).toBe(0o640)
    expect(modeOf(fs, '/run.sh')).toBe(0o755)
  })

  it('toJSON names a mode only where it differs from newFileMode, so a snapshot round-trips under any newFileMode', () => {
    const files = { 'a.txt': 'a', 'b.txt': { content: 'b', mode: 0o600 }, 'c.sh': { content: 'c', mode: 0o755 } }
    const wide = new MemoryFileSystem({ newFileMode: 0o644, files })
    expect(wide.toJSON()).toEqual(files)
    expect(modeOf(wide, '/a.txt')).toBe(0o644)
    expect(new MemoryFileSystem({ newFileMode: 0o644, files: wide.toJSON() }).toJSON()).toEqual(files)
    // under the default, b.txt has the default mode: a plain string again
    expect(new MemoryFileSystem({ files }).toJSON()).toEqual({ 'a.txt': 'a', 'b.txt': 'b', 'c.sh': { content: 'c', mode: 0o755 } })
  })

  it('refuses a newFileMode outside 0o000..0o777', () => {
    for (const bad of [-1, 0o1000, 1.5, Number.NaN]) expect(() => new MemoryFileSystem({ newFileMode: bad })).toThrow(RangeError)
  })

  it('a newFileMode without owner write still creates and seeds (0400), like the local backend', async () => {
    const fs = new MemoryFileSystem({ newFileMode: 0o400, files: { 'seed.txt': 's', 'x.sh': { content: 'x', mode: 0o500 } } })
    await fs.writeText(await fs.resolve('dir/new.txt'), 'n')
    expect([modeOf(fs, '/seed.txt'), modeOf(fs, '/x.sh'), modeOf(fs, '/dir/new.txt')]).toEqual([0o400, 0o500, 0o400])
    expect(await fs.readText(await fs.resolve('dir/new.txt'))).toBe('n')
    expect(fs.toJSON()).toEqual({ 'dir/new.txt': 'n', 'seed.txt': 's', 'x.sh': { content: 'x', mode: 0o500 } })
  })
})

describe('config', () => {
  const open = async (raw: unknown): Promise<MemoryFileSystem> =>
    (await memoryBackend.open(memoryBackend.parseConfig(raw, 'backend'), {}, '/')) as MemoryFileSystem

  it('"newFileMode": "0640" makes new and seeded files 0640; without it they are 0600', async () => {
    const wide = await open({ type: 'memory', newFileMode: '0640', files: { 'seed.txt': 's' } })
    await wide.writeText(await wide.resolve('new.txt'), 'n')
    expect([modeOf(wide, '/new.txt'), modeOf(wide, '/seed.txt')]).toEqual([0o640, 0o640])
    const plain = await open({ type: 'memory' })
    await plain.writeText(await plain.resolve('new.txt'), 'n')
    expect(modeOf(plain, '/new.txt')).toBe(0o600)
  })

  it('takes the mode as an octal string only', () => {
    expect(memoryBackend.parseConfig({ type: 'memory', newFileMode: '0o755' }, 'backend')).toEqual({ type: 'memory', newFileMode: 0o755 })
    expect(() => memoryBackend.parseConfig({ type: 'memory', newFileMode: 640 }, 'backend')).toThrow(
      'config: backend.newFileMode: expected permission bits as an octal string, e.g. "0600", found the number 640',
    )
    expect(() => memoryBackend.parseConfig({ type: 'memory', newFileMode: '0800' }, 'backend')).toThrow(/backend\.newFileMode/)
  })
})

describe('versions', () => {
  it('a same-size write straight on the Volume in the same clock tick changes the version', async () => {
    const fs = new MemoryFileSystem({ clock: () => 0 })
    const t = await fs.resolve('a.txt')
    const { version } = await fs.writeText(t, 'aaaa')
    fs.volume.writeFileSync('/a.txt', 'bbbb')
    fs.volume.utimesSync('/a.txt', 0, 0)
    const after = await fs.stat(t)
    expect(after?.version).not.toBe(version)
    expect(after?.size).toBe(4)
  })

  it('a file deleted and recreated on the Volume (reusing the inode number) gets a new version', async () => {
    const fs = new MemoryFileSystem({ files: { 'a.txt': 'same' } })
    const t = await fs.resolve('a.txt')
    const first = (await fs.stat(t))?.version
    fs.volume.unlinkSync('/a.txt')
    fs.volume.writeFileSync('/a.txt', 'same')
    expect((await fs.stat(t))?.version).not.toBe(first)
  })

  it('close() stops tracking, and is idempotent', async () => {
    const fs = new MemoryFileSystem()
    await fs.close()
    await fs.close()
    expect(fs.volume._core.changes.listeners.size).toBe(0)
  })
})

describe('the memfs error table', () => {
  it.each(Object.entries(MEMFS_ERROR_TABLE))('%s maps to a seamfs code', (code, row) => {
    const mapped = toFsError(Object.assign(new Error('raw text'), { code }), 'read', '/p')
    expect(FS_ERROR_CODES).toContain(mapped.code)
    expect(mapped.code).toBe(row.code)
    expect(mapped.message).toBe(`cannot read "/p": ${row.reason}`)
  })

  it('unknown errors are FS_IO_ERROR, aborts FS_ABORTED', () => {
    expect(isFsError(toFsError(new Error('x'), 'read', '/p'), 'FS_IO_ERROR')).toBe(true)
    expect(toFsError(new DOMException('a', 'AbortError'), 'write', '/p').code).toBe('FS_ABORTED')
  })
})

describe('no disk I/O', () => {
  it('a whole workload touches no host file: every node:fs entry point is disabled meanwhile', async () => {
    const hostDir = join(tmpdir(), `seamfs-memory-must-not-exist-${process.pid}`)
    const calls: string[] = []
    const patched: Array<[Record<string, unknown>, string, unknown]> = []
    const trap = (object: Record<string, unknown>, label: string): void => {
      for (const name of Object.keys(object)) {
        const original = object[name]
        if (typeof original !== 'function' || /^[A-Z_]/.test(name)) continue
        patched.push([object, name, original])
        object[name] = (...args: unknown[]) => {
          calls.push(`${label}.${name}(${String(args[0])})`)
          throw new Error(`host fs used: ${label}.${name}`)
        }
      }
    }
    trap(nodeFs, 'fs')
    trap(nodeFs.promises, 'fs.promises')
    syncBuiltinESMExports() // named `import { x } from 'node:fs'` bindings see the traps too
    try {
      const fs = new MemoryFileSystem({ cwd: hostDir, files: { 'seed.txt': 'seed', 'd/': null } })
      const t = await fs.resolve('deep/new.txt')
      const { version } = await fs.writeText(t, 'hello\r\nworld\r\n')
      await fs.editText(t, { oldString: 'world', newString: 'there', replaceAll: false }, { expected: { version } })
      await fs.readText(t)
      for await (const chunk of await fs.streamText(t)) expect(chunk.length).toBeGreaterThan(0)
      await fs.listDir(await fs.resolve('.'))
      await fs.stat(await fs.resolve(join(hostDir, 'seed.txt')))
      await fs.lstat('seed.txt')
      fs.toJSON()
    } finally {
      for (const [object, name, original] of patched) object[name] = original
      syncBuiltinESMExports()
    }
    expect(patched.length).toBeGreaterThan(50)
    expect(calls).toEqual([])
    expect(existsSync(hostDir)).toBe(false)
    expect(readdirSync(tmpdir()).filter((n) => n.startsWith('seamfs-memory-must-not-exist'))).toEqual([])
  })
})

describe('resolve', () => {
  it('resolves a 20,000-segment missing path without recursion per segment', async () => {
    const fs = new MemoryFileSystem({ files: { 'd0/link': { symlink: '/real' }, 'real/': null } })
    const deep = Array.from({ length: 20_000 }, (_, i) => `d${i % 10}`).join('/')
    expect((await fs.resolve(`${deep}/x.txt`)).targetKey).toBe(`/${deep}/x.txt`)
    // a symlink on the way is still followed, however deep the missing rest
    expect((await fs.resolve(`d0/link/${deep}`)).targetKey).toBe(`/real/${deep}`)
  })
})

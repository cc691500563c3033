/**
 * Write-protected files on the live server: a regular file whose mode grants
 * write to no one is FS_PERMISSION_DENIED on write and edit, although the server's rename would
 * replace it (the directory is writable), and nothing changes: content, mode, no temp residue.
 */
import { beforeEach, describe, expect, inject, it } from 'vitest'
import { codeOf } from '@seamfs/conformance'
import { SftpFileSystem } from '@seamfs/backend-ssh'
import { titled } from './helpers.js'
import { suiteScratch, type RawSftp } from './raw.js'

const server = inject('sftp')

describe.skipIf(server === null)(titled('write-protected files over SFTP', server, inject('sftpWhy')), () => {
  let raw: RawSftp
  let base: string
  let root: string
  let fs: SftpFileSystem

  suiteScratch(server, 'ro-', (scratch) => {
    raw = scratch.raw
    base = scratch.base
  })
  beforeEach(async () => {
    if (server === null) return
    root = await raw.freshDir(base, 'root-')
    fs = new SftpFileSystem({ ...server, root })
    return async () => fs.close()
  })

  /** A file with `mode`, and what a check of "nothing changed" needs. */
  async function protectedFile(name: string, mode: number): Promise<() => Promise<void>> {
    await raw.writeInPlace(`${root}/${name}`, Buffer.from('keep me\n'))
    await raw.chmod(`${root}/${name}`, mode)
    return async () => {
      expect(await raw.mode(`${root}/${name}`)).toBe(mode)
      await raw.chmod(`${root}/${name}`, 0o600)
      expect((await raw.read(`${root}/${name}`)).toString()).toBe('keep me\n')
      await raw.chmod(`${root}/${name}`, mode)
      expect((await raw.names(root)).filter((n) => n.startsWith('.seamfs-tmp-'))).toEqual([])
    }
  }

  for (const mode of [0o444, 0o400, 0o000, 0o555]) {
    it(`mode 0${mode.toString(8).padStart(3, '0')}: write, guarded write and edit are FS_PERMISSION_DENIED; nothing changes`, async () => {
      const unchanged = await protectedFile('ro.txt', mode)
      const t = await fs.resolve('ro.txt')
      expect(await codeOf(fs.writeText(t, 'replaced'))).toBe('FS_PERMISSION_DENIED')
      expect(await codeOf(fs.editText(t, { oldString: 'keep', newString: 'lose', replaceAll: false }))).toBe('FS_PERMISSION_DENIED')
      if (mode & 0o444) {
        const { version } = (await fs.stat(t))!
        expect(await codeOf(fs.writeText(t, 'replaced', { expected: { kind: 'replaceIfVersion', version } }))).toBe('FS_PERMISSION_DENIED')
        expect(await codeOf(fs.editText(t, { oldString: 'keep', newString: 'lose', replaceAll: false }, { expected: { version } }))).toBe(
          'FS_PERMISSION_DENIED',
        )
      }
      await unchanged()
    })
  }

  it('the message names the mode; a stale guard is FS_STALE_VERSION first; createIfAbsent is FS_NOT_OBSERVED', async () => {
    const unchanged = await protectedFile('ro.txt', 0o444)
    const t = await fs.resolve('ro.txt')
    await expect(fs.writeText(t, 'x')).rejects.toThrow(/write-protected \(mode 0444\)/)
    const { version } = (await fs.stat(t))!
    // The guard holds: the mode refuses.
    expect(await codeOf(fs.editText(t, { oldString: 'keep', newString: 'x', replaceAll: false }, { expected: { version } }))).toBe('FS_PERMISSION_DENIED')
    expect(await codeOf(fs.writeText(t, 'x', { expected: { kind: 'createIfAbsent' } }))).toBe('FS_NOT_OBSERVED')
    await unchanged()
    // Changed behind its back: the guard is checked first, as on every backend.
    await raw.chmod(`${root}/ro.txt`, 0o644)
    await raw.writeInPlace(`${root}/ro.txt`, Buffer.from('changed\n'))
    await raw.chmod(`${root}/ro.txt`, 0o444)
    expect(await codeOf(fs.editText(t, { oldString: 'changed', newString: 'x', replaceAll: false }, { expected: { version } }))).toBe('FS_STALE_VERSION')
    expect(await codeOf(fs.writeText(t, 'x', { expected: { kind: 'replaceIfVersion', version } }))).toBe('FS_STALE_VERSION')
    expect((await raw.read(`${root}/ro.txt`)).toString()).toBe('changed\n')
  })

  it('through a symlink: the link target is write-protected, so the write is refused and both stay', async () => {
    const unchanged = await protectedFile('ro.txt', 0o444)
    await raw.symlink(`${root}/link.txt`, 'ro.txt')
    expect(await codeOf(fs.writeText(await fs.resolve('link.txt'), 'x'))).toBe('FS_PERMISSION_DENIED')
    await unchanged()
    expect(await raw.names(root)).toEqual(['link.txt', 'ro.txt'])
  })

  it('a file writable by someone (0644, 0464, 0646) is still written, and keeps its mode', async () => {
    for (const mode of [0o644, 0o464, 0o646]) {
      await raw.writeInPlace(`${root}/w.txt`, Buffer.from('old'))
      await raw.chmod(`${root}/w.txt`, mode)
      await fs.writeText(await fs.resolve('w.txt'), `new ${mode}`)
      expect(await raw.mode(`${root}/w.txt`)).toBe(mode)
      await raw.chmod(`${root}/w.txt`, 0o644)
      expect((await raw.read(`${root}/w.txt`)).toString()).toBe(`new ${mode}`)
    }
  })
})

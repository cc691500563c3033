import { mkdtempSync, readFileSync, rmSync, symlinkSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { LocalFileSystem } from '@seamfs/backend-local'
import { MemoryFileSystem } from '@seamfs/backend-memory'
import { describe, expect, it, onTestFinished } from 'vitest'
import { createSeamfsBackend } from '../src/index.js'
import { describeBackend } from './suite.js'

describeBackend('MemoryFileSystem', async () => ({ fs: new MemoryFileSystem(), root: '/', dispose: async () => undefined }))

describeBackend('LocalFileSystem (temp dir)', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'seamfs-deepagents-'))
  const fs = new LocalFileSystem({ cwd: tmpdir() })
  return { fs, root: dir, dispose: async () => rmSync(dir, { recursive: true, force: true }) }
})

describe('SeamfsBackend on LocalFileSystem: a symlink out of the root', () => {
  it('is refused like "..", whatever the operation', async () => {
    const outside = mkdtempSync(join(tmpdir(), 'seamfs-deepagents-out-'))
    const dir = mkdtempSync(join(tmpdir(), 'seamfs-deepagents-'))
    onTestFinished(() => {
      rmSync(dir, { recursive: true, force: true })
      rmSync(outside, { recursive: true, force: true })
    })
    writeFileSync(join(outside, 'secret.txt'), 'secret\n')
    symlinkSync(outside, join(dir, 'link'))
    const backend = createSeamfsBackend({ fs: new LocalFileSystem({ cwd: dir }), root: dir })
    expect(await backend.read('/link/secret.txt')).toEqual({ error: 'cannot resolve "/link/secret.txt": outside the agent\'s root' })
    expect((await backend.write('/link/new.txt', 'x')).error).toBe('Error: cannot resolve "/link/new.txt": outside the agent\'s root')
    expect(await backend.downloadFiles(['/link/secret.txt'])).toEqual([{ path: '/link/secret.txt', content: null, error: 'permission_denied' }])
    expect(readFileSync(join(outside, 'secret.txt'), 'utf8')).toBe('secret\n')
  })
})

/**
 * A denial for lying outside tells the model where it may go: the roots as pinned, for reads and
 * for changes; a read-only session says that nothing can be changed.
 */
import { MemoryFileSystem } from '@seamfs/backend-memory'
import { SandboxedFileSystem, type FsError } from '@seamfs/core'
import { describe, expect, it } from 'vitest'

const files = { '/ws/in.txt': 'in\n', '/data/d.txt': 'd\n', '/etc/secret': 's\n' }

async function failure(call: () => Promise<unknown>): Promise<FsError> {
  try {
    await call()
  } catch (err) {
    return err as FsError
  }
  throw new Error('expected a failure')
}

describe('sandbox denials name the roots', () => {
  it('one root: reads and changes outside are told to stay under it', async () => {
    const fs = new SandboxedFileSystem(new MemoryFileSystem({ cwd: '/', files }), { mode: 'workspace-write', workspaceRoot: '/ws', confineReads: true })
    const read = await failure(async () => fs.readText(await fs.resolve('/etc/secret')))
    expect([read.code, read.message]).toEqual(['FS_SANDBOX_DENIED', 'cannot read "/etc/secret": outside the sandbox roots; use a path under "/ws"'])
    const write = await failure(async () => fs.writeText(await fs.resolve('/etc/new'), 'x'))
    expect(write.message).toBe('cannot write "/etc/new": file access denied under workspace-write mode; changes must lie under "/ws"')
  })

  it('two roots: both named', async () => {
    const fs = new SandboxedFileSystem(new MemoryFileSystem({ cwd: '/', files }), {
      mode: 'workspace-write',
      workspaceRoot: '/ws',
      writableRoots: ['/data'],
      confineReads: true,
    })
    expect((await failure(async () => fs.stat(await fs.resolve('/etc/secret')))).message).toMatch(/; use a path under "\/ws" or "\/data"$/)
    expect((await failure(async () => fs.remove(await fs.resolve('/etc/secret')))).message).toMatch(/; changes must lie under "\/ws" or "\/data"$/)
    expect(await fs.readText(await fs.resolve('/data/d.txt'))).toBe('d\n')
  })

  it('a root that does not resolve is named as configured and said to be missing; one that resolves, as pinned', async () => {
    // A path through a file never resolves; a missing directory does (it may be created), and is pinned.
    const fs = new SandboxedFileSystem(new MemoryFileSystem({ cwd: '/', files }), {
      mode: 'workspace-write',
      workspaceRoot: '/later',
      writableRoots: ['/ws/in.txt/sub'],
      confineReads: true,
    })
    const read = await failure(async () => fs.readText(await fs.resolve('/etc/secret')))
    expect(read.message).toBe('cannot read "/etc/secret": outside the sandbox roots; use a path under "/later" or "/ws/in.txt/sub" (not found)')
  })

  it('read-only: a change is refused as one the session cannot make', async () => {
    const fs = new SandboxedFileSystem(new MemoryFileSystem({ cwd: '/', files }), { mode: 'read-only', workspaceRoot: '/ws', confineReads: true })
    const err = await failure(async () => fs.writeText(await fs.resolve('/ws/in.txt'), 'x'))
    expect(err.message).toBe('cannot write "/ws/in.txt": file access denied under read-only mode (this session cannot change files)')
  })
})

/**
 * Overlapping mounts: a read-only mount whose files a writable mount reaches too
 * can be edited through it. `MountFileSystem.overlaps` finds such pairs (the CLI refuses the certain
 * ones at load time); one filesystem mounted both ways is refused at construction. Real local
 * directories; memory stores for the cases that need no disk.
 */
import { mkdirSync, mkdtempSync, readFileSync, realpathSync, rmSync, symlinkSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterEach, describe, expect, it } from 'vitest'
import { LocalFileSystem } from '@seamfs/backend-local'
import { MemoryFileSystem } from '@seamfs/backend-memory'
import { MountFileSystem, SandboxedFileSystem, type FileSystem, type FsTarget, type MountEntry } from '@seamfs/core'
import { FileSystemLayer } from '@seamfs/core/backend'
import { expectFsErrorAsync } from './helpers.js'

const cleanups: Array<() => void> = []
afterEach(() => {
  for (const cleanup of cleanups.splice(0)) cleanup()
})

/** `<top>/project/{README.md, docs/guide.md, out/}`, canonical. */
function project(): { top: string; project: string; docs: string; out: string } {
  const top = realpathSync(mkdtempSync(join(tmpdir(), 'seamfs-overlap-')))
  cleanups.push(() => rmSync(top, { recursive: true, force: true }))
  const dirs = { top, project: join(top, 'project'), docs: join(top, 'project/docs'), out: join(top, 'project/out') }
  for (const dir of [dirs.docs, dirs.out]) mkdirSync(dir, { recursive: true })
  writeFileSync(join(dirs.project, 'README.md'), 'readme\n')
  writeFileSync(join(dirs.docs, 'guide.md'), 'guide\n')
  return dirs
}

const local = (cwd: string): LocalFileSystem => new LocalFileSystem({ cwd })
const ro = (fs: FileSystem): { fs: FileSystem; readOnly: true } => ({ fs, readOnly: true })

/** A memory store whose URLs name a server (`sftp://<host>/…`), as a remote store's do. */
class Served extends FileSystemLayer {
  constructor(
    inner: FileSystem,
    readonly host: string,
  ) {
    super(inner)
  }
  override fileUrl(target: FsTarget): string {
    return `sftp://${this.host}${target.targetKey}`
  }
}
const served = (host: string, cwd: string): Served => new Served(new MemoryFileSystem({ cwd, files: { [`${cwd}/`]: null } }), host)

describe('MountFileSystem.overlaps on this machine’s disk', () => {
  it('a read-only mount inside a writable mount’s root is editable through it (a link under "/"): reported certain', async () => {
    const d = project()
    symlinkSync('docs', join(d.project, 'alias'))
    const mounts = new MountFileSystem({ '/': local(d.project), '/docs': ro(local(d.docs)) })
    const fs = new SandboxedFileSystem(mounts, { mode: 'workspace-write', workspaceRoot: '/' })
    // What the check is for: refused at /docs, written all the same through /alias.
    await expectFsErrorAsync(fs.writeText(await fs.resolve('/docs/guide.md'), 'pwned\n'), 'FS_PERMISSION_DENIED')
    await fs.writeText(await fs.resolve('/alias/guide.md'), 'pwned\n')
    expect(readFileSync(join(d.docs, 'guide.md'), 'utf8')).toBe('pwned\n')
    expect(await mounts.overlaps()).toEqual([
      { readOnly: '/docs', writable: '/', certainty: 'certain', reach: 'holds', readOnlyRoot: d.docs, writableRoot: d.project },
    ])
  })

  it('one directory mounted read-only and writable, or by different spellings (a link to it), is found too', async () => {
    const d = project()
    symlinkSync(d.docs, join(d.top, 'docs-link'))
    const mounts = new MountFileSystem({ '/': new MemoryFileSystem(), '/docs': ro(local(d.docs)), '/rw': local(join(d.top, 'docs-link')) })
    expect(await mounts.overlaps()).toEqual([
      { readOnly: '/docs', writable: '/rw', certainty: 'certain', reach: 'holds', readOnlyRoot: d.docs, writableRoot: d.docs },
    ])
  })

  it('a writable mount inside a read-only root: a window only where the read-only mount shows that directory', async () => {
    const d = project()
    const window = new MountFileSystem({ '/': ro(local(d.project)), '/out': local(d.out) })
    expect(await window.overlaps()).toEqual([])
    const elsewhere = new MountFileSystem({ '/': ro(local(d.project)), '/build': local(d.out) })
    expect(await elsewhere.overlaps()).toEqual([
      { readOnly: '/', writable: '/build', certainty: 'certain', reach: 'inside', readOnlyRoot: d.project, writableRoot: d.out },
    ])
  })

  it('stores beside each other, two writable mounts, and a root that shares only a name prefix do not overlap', async () => {
    const d = project()
    mkdirSync(join(d.top, 'project-docs'))
    const mounts = new MountFileSystem({
      '/': local(d.project),
      '/rw-docs': local(d.docs),
      '/sibling': ro(local(join(d.top, 'project-docs'))),
      '/mem': ro(new MemoryFileSystem()),
    })
    expect(await mounts.overlaps()).toEqual([])
  })

  it('one filesystem mounted read-only at one point and writable at another is refused at construction', () => {
    const fs = new MemoryFileSystem()
    expect(() => new MountFileSystem({ '/': fs, '/ro': ro(fs) })).toThrow(/mount "\/ro" is read-only, but its filesystem is mounted writable at "\/" too/)
    expect(() => new MountFileSystem({ '/': ro(fs), '/ro': ro(fs) })).not.toThrow()
  })
})

describe('MountFileSystem.overlaps on other stores', () => {
  it('memory stores are each their own: never compared', async () => {
    const mounts = new MountFileSystem({ '/': new MemoryFileSystem({ cwd: '/' }), '/ro': ro(new MemoryFileSystem({ cwd: '/' })) })
    expect(await mounts.overlaps()).toEqual([])
  })

  it('two stores of one server with nested roots may be one: possible; another server, or roots beside each other, not', async () => {
    const mounts = new MountFileSystem({ '/': served('h:22', '/srv'), '/docs': ro(served('h:22', '/srv/docs')), '/other': ro(served('g:22', '/srv/x')) })
    expect(await mounts.overlaps()).toEqual([
      { readOnly: '/docs', writable: '/', certainty: 'possible', reach: 'holds', readOnlyRoot: 'sftp://h:22/srv/docs', writableRoot: 'sftp://h:22/srv' },
    ])
    const beside = new MountFileSystem({ '/': served('h:22', '/srv/a'), '/b': ro(served('h:22', '/srv/b')) })
    expect(await beside.overlaps()).toEqual([])
  })

  it('a pair the caller says may share a store (a server that may be this machine) is compared by path', async () => {
    const d = project()
    const mounts = new MountFileSystem({ '/': local(d.project), '/remote-docs': ro(served('localhost:22', d.docs)) })
    expect(await mounts.overlaps()).toEqual([])
    const asked: string[] = []
    const mayShare = (a: MountEntry, b: MountEntry): boolean => {
      asked.push(`${a.point} ${b.point}`)
      return true
    }
    expect(await mounts.overlaps({ mayShare })).toEqual([
      { readOnly: '/remote-docs', writable: '/', certainty: 'possible', reach: 'holds', readOnlyRoot: `sftp://localhost:22${d.docs}`, writableRoot: d.project },
    ])
    expect(asked).toEqual(['/remote-docs /'])
  })
})

import { mkdirSync, mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { localConformance } from '@seamfs/backend-local/conformance'
import { LocalFileSystem } from '@seamfs/backend-local'
import { MemoryFileSystem } from '@seamfs/backend-memory'
import { memoryConformance } from '@seamfs/backend-memory/conformance'
import { MountFileSystem, type FileSystem } from '@seamfs/core'
import { describe, expect, it } from 'vitest'
import { describeConformance, externalByMount, type ExternalHooks } from '@seamfs/conformance'

// The whole kit on a mount table: memory at `/`, a local directory at `/local`, another memory at
// `/mem`. The subject's cwd lies inside one mount (a fresh `work` directory), so the kit exercises that
// store through the mount; the external hooks go to the store the path routes to.

const LOCAL_HOOKS = localConformance().external as ExternalHooks<FileSystem>
const MEMORY_HOOKS = memoryConformance().external as ExternalHooks<FileSystem>
const external = externalByMount((fs) => (fs instanceof LocalFileSystem ? LOCAL_HOOKS : MEMORY_HOOKS))

for (const cwd of ['/local/work', '/mem/work']) {
  await describeConformance<MountFileSystem>({
    name: `MountFileSystem (cwd ${cwd})`,
    create: ({ limits }) => {
      const root = mkdtempSync(join(tmpdir(), 'seamfs-mounts-'))
      mkdirSync(join(root, 'work'))
      const mounts = {
        '/': new MemoryFileSystem({ files: { 'top.txt': 'root store' } }),
        '/local': new LocalFileSystem({ cwd: root }),
        '/mem': new MemoryFileSystem({ files: { 'work/': null } }),
      }
      return {
        fs: new MountFileSystem(mounts, { ...limits, cwd }),
        dispose: () => rmSync(root, { recursive: true, force: true }),
      }
    },
    external,
    options: { modelRuns: 40 },
  })
}

describe('externalByMount', () => {
  it('routes a path to the store it lands in, relative to that store, and refuses a hook the store lacks', async () => {
    const seen: string[] = []
    const local = new MemoryFileSystem()
    const table = new MountFileSystem({ '/': new MemoryFileSystem(), '/mem': local, '/memories': new MemoryFileSystem() }, { cwd: '/mem' })
    const hooks = externalByMount((fs) => (fs === local ? { remove: (_, path) => void seen.push(path) } : {}))
    await hooks.remove?.({ fs: table }, 'a/b.txt')
    await hooks.remove?.({ fs: table }, '../mem/c.txt')
    expect(seen).toEqual(['a/b.txt', 'c.txt'])
    expect(() => hooks.remove?.({ fs: table }, '../memories/x.txt')).toThrow('the store mounted at /memories has no external.remove hook')
    expect(() => hooks.readBytes?.({ fs: table }, 'a/b.txt')).toThrow('the store mounted at /mem has no external.readBytes hook')
  })
})

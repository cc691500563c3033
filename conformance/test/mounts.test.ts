import { mkdirSync, mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join, posix } from 'node:path'
import { localConformance } from '@seamfs/backend-local/conformance'
import { LocalFileSystem } from '@seamfs/backend-local'
import { MemoryFileSystem } from '@seamfs/backend-memory'
import { memoryConformance } from '@seamfs/backend-memory/conformance'
import { MountFileSystem, type FileSystem } from '@seamfs/core'
import { describeConformance, type ConformanceSubject, type ExternalHooks } from '@seamfs/conformance'

// The whole kit on a mount table: memory at `/`, a local directory at `/local`, another memory at
// `/mem`. The subject's cwd lies inside one mount (a fresh `work` directory), so the kit exercises that
// store through the mount; the external hooks go to the store the path routes to.

type AnyHooks = ExternalHooks<FileSystem>
const LOCAL_HOOKS = localConformance().external as AnyHooks
const MEMORY_HOOKS = memoryConformance().external as AnyHooks

/** The store `path` (relative to the mount table's cwd) lands in, as a subject of that store's hooks, and the path inside it. */
function routed(fs: MountFileSystem, path: string): { subject: ConformanceSubject<FileSystem>; rest: string; hooks: AnyHooks } {
  const abs = posix.resolve(fs.cwd, path)
  const mount = [...fs.mounts].reverse().find((m) => m.point === '/' || abs === m.point || abs.startsWith(`${m.point}/`))
  if (mount === undefined) throw new Error(`no mount for ${abs}`)
  const rest = mount.point === '/' ? abs.slice(1) : abs.slice(mount.point.length + 1)
  return { subject: { fs: mount.fs }, rest, hooks: mount.fs instanceof LocalFileSystem ? LOCAL_HOOKS : MEMORY_HOOKS }
}

/** Each external hook, composed by mount. */
const external: ExternalHooks<MountFileSystem> = {
  writeBytes: ({ fs }, path, bytes) => {
    const { subject, rest, hooks } = routed(fs, path)
    return hooks.writeBytes?.(subject, rest, bytes)
  },
  readBytes: ({ fs }, path) => {
    const { subject, rest, hooks } = routed(fs, path)
    if (hooks.readBytes === undefined) throw new Error('no readBytes hook')
    return hooks.readBytes(subject, rest)
  },
  remove: ({ fs }, path) => {
    const { subject, rest, hooks } = routed(fs, path)
    return hooks.remove?.(subject, rest)
  },
  symlink: ({ fs }, path, target) => {
    const { subject, rest, hooks } = routed(fs, path)
    return hooks.symlink?.(subject, rest, target)
  },
  chmod: ({ fs }, path, mode) => {
    const { subject, rest, hooks } = routed(fs, path)
    return hooks.chmod?.(subject, rest, mode)
  },
  mode: ({ fs }, path) => {
    const { subject, rest, hooks } = routed(fs, path)
    if (hooks.mode === undefined) throw new Error('no mode hook')
    return hooks.mode(subject, rest)
  },
}

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

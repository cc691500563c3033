import { posix } from 'node:path'
import type { FileSystem, MountFileSystem } from '@seamfs/core'
import type { ConformanceSubject, ExternalHooks } from './types.js'

type Hooks = ExternalHooks<FileSystem>

/**
 * The external hooks of a {@link MountFileSystem} subject, composed by mount: each path (relative to
 * the mount table's cwd) goes to the hooks `hooksOf` gives for the store it routes to, with the path
 * inside that store (relative to the store's own cwd, its root in the table). A hook the store does
 * not provide throws, naming it: a kit test never passes on a hook that silently did nothing.
 *
 * ```ts
 * external: externalByMount((fs) => (fs instanceof LocalFileSystem ? localHooks : memoryHooks))
 * ```
 */
export function externalByMount(hooksOf: (fs: FileSystem) => Hooks | undefined): ExternalHooks<MountFileSystem> {
  const routed = <K extends keyof Hooks>(
    table: MountFileSystem,
    path: string,
    name: K,
  ): { hook: NonNullable<Hooks[K]>; subject: ConformanceSubject; rest: string } => {
    const abs = posix.resolve(table.cwd, path)
    const mount = [...table.mounts].reverse().find((m) => m.point === '/' || abs === m.point || abs.startsWith(`${m.point}/`))
    if (mount === undefined) throw new Error(`no mount holds ${abs}`)
    const hook = hooksOf(mount.fs)?.[name]
    if (hook === undefined) throw new Error(`the store mounted at ${mount.point} has no external.${name} hook`)
    const rest = mount.point === '/' ? abs.slice(1) : abs.slice(mount.point.length + 1)
    return { hook: hook, subject: { fs: mount.fs }, rest: rest === '' ? '.' : rest }
  }
  return {
    writeBytes: ({ fs }, path, bytes) => {
      const { hook, subject, rest } = routed(fs, path, 'writeBytes')
      return hook(subject, rest, bytes)
    },
    readBytes: ({ fs }, path) => {
      const { hook, subject, rest } = routed(fs, path, 'readBytes')
      return hook(subject, rest)
    },
    remove: ({ fs }, path) => {
      const { hook, subject, rest } = routed(fs, path, 'remove')
      return hook(subject, rest)
    },
    symlink: ({ fs }, path, target) => {
      const { hook, subject, rest } = routed(fs, path, 'symlink')
      return hook(subject, rest, target)
    },
    chmod: ({ fs }, path, mode) => {
      const { hook, subject, rest } = routed(fs, path, 'chmod')
      return hook(subject, rest, mode)
    },
    mode: ({ fs }, path) => {
      const { hook, subject, rest } = routed(fs, path, 'mode')
      return hook(subject, rest)
    },
  }
}

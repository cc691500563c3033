import { posix } from 'node:path'
import type { Volume } from 'memfs'
import type { Dirent } from '@jsonjoy.com/fs-node'
import { compareNames } from '@seamfs/core/backend'
import type { MemoryEntry, MemoryTree } from './options.js'

const strictUtf8 = new TextDecoder('utf-8', { fatal: true, ignoreBOM: true })

/** Writes `files` into the volume under `cwd`, in the object's key order. */
export function seedTree(volume: Volume, cwd: string, files: MemoryTree, newFileMode: number): void {
  for (const [key, entry] of Object.entries(files)) {
    const abs = posix.resolve(cwd, key)
    if (entry === null) {
      volume.mkdirSync(abs, { recursive: true })
      continue
    }
    volume.mkdirSync(posix.dirname(abs), { recursive: true })
    // Written with memfs's default mode, then chmod-ed: a mode without owner write must not stop the seeding.
    if (typeof entry === 'string' || entry instanceof Uint8Array) {
      volume.writeFileSync(abs, entry)
      volume.chmodSync(abs, newFileMode)
    } else if ('symlink' in entry) {
      volume.symlinkSync(entry.symlink, abs)
    } else {
      volume.writeFileSync(abs, entry.content)
      volume.chmodSync(abs, entry.mode)
    }
  }
}

/** Snapshot of everything under `cwd`, in the shape `seedTree` takes; entries in code-point order. */
export function snapshotTree(volume: Volume, cwd: string, newFileMode: number): Record<string, MemoryEntry> {
  const out: Record<string, MemoryEntry> = {}
  const walk = (dir: string, prefix: string): void => {
    const dirents = volume.readdirSync(dir, { withFileTypes: true }) as Dirent[]
    const names = dirents.map((d) => String(d.name)).sort(compareNames)
    for (const name of names) {
      const abs = posix.join(dir, name)
      const key = `${prefix}${name}`
      const st = volume.lstatSync(abs)
      if (st.isSymbolicLink()) {
        out[key] = { symlink: String(volume.readlinkSync(abs)) }
      } else if (st.isDirectory()) {
        if (volume.readdirSync(abs).length === 0) out[`${key}/`] = null
        else walk(abs, `${key}/`)
      } else {
        const bytes = volume.readFileSync(abs) as Uint8Array
        let content: string | Uint8Array
        try {
          content = strictUtf8.decode(bytes)
        } catch {
          content = Uint8Array.from(bytes)
        }
        const mode = Number(st.mode) & 0o777
        out[key] = mode === newFileMode ? content : { content, mode }
      }
    }
  }
  walk(cwd, '')
  return out
}

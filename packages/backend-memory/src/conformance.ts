import { posix } from 'node:path'
import type { ConformanceOptions, ConformanceTuning } from '@seamfs/conformance'
import { MemoryFileSystem } from './memory-file-system.js'

const at = (fs: MemoryFileSystem, path: string): string => posix.join(fs.cwd, path)

/**
 * Conformance options for MemoryFileSystem: a fresh volume per test, and hooks
 * that write straight into the Volume, behind the filesystem's back.
 */
export function memoryConformance(tuning: ConformanceTuning = {}): ConformanceOptions<MemoryFileSystem> {
  return {
    name: 'MemoryFileSystem',
    create: ({ limits }) => ({ fs: new MemoryFileSystem({ cwd: '/work', ...limits }) }),
    external: {
      writeBytes: ({ fs }, path, bytes) => {
        fs.volume.mkdirSync(posix.dirname(at(fs, path)), { recursive: true })
        fs.volume.writeFileSync(at(fs, path), bytes)
      },
      readBytes: ({ fs }, path) => fs.volume.readFileSync(at(fs, path)) as Uint8Array,
      remove: ({ fs }, path) => fs.volume.unlinkSync(at(fs, path)),
      chmod: ({ fs }, path, mode) => fs.volume.chmodSync(at(fs, path), mode),
      mode: ({ fs }, path) => Number(fs.volume.statSync(at(fs, path)).mode) & 0o777,
      symlink: ({ fs }, path, target) => {
        fs.volume.mkdirSync(posix.dirname(at(fs, path)), { recursive: true })
        fs.volume.symlinkSync(target, at(fs, path))
      },
    },
    options: tuning,
  }
}

export default memoryConformance({ modelRuns: 200 })

import { posix } from 'node:path'
import { describeConformance } from '@seamfs/conformance'
import { MemoryFileSystem } from '@seamfs/backend-memory'

// The hooks write straight into the Volume, behind the filesystem's back.
const at = (fs: MemoryFileSystem, path: string): string => posix.join(fs.cwd, path)

await describeConformance<MemoryFileSystem>({
  name: 'MemoryFileSystem',
  create: () => ({ fs: new MemoryFileSystem({ cwd: '/work' }) }),
  external: {
    writeBytes: ({ fs }, path, bytes) => {
      fs.volume.mkdirSync(posix.dirname(at(fs, path)), { recursive: true })
      fs.volume.writeFileSync(at(fs, path), bytes)
    },
    readBytes: ({ fs }, path) => fs.volume.readFileSync(at(fs, path)) as Uint8Array,
    remove: ({ fs }, path) => fs.volume.unlinkSync(at(fs, path)),
    symlink: ({ fs }, path, target) => {
      fs.volume.mkdirSync(posix.dirname(at(fs, path)), { recursive: true })
      fs.volume.symlinkSync(target, at(fs, path))
    },
  },
  // This backend is cheap: many model-based runs.
  options: { modelRuns: 600 },
})

import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { dirname, join } from 'node:path'
import { describeConformance } from '@seamfs/conformance'
import { ReadOnlyDirectoryFileSystem } from './read-only-directory.js'

// The read-only profile: the fixtures are written into the directory by the external hooks, as another program would.
const dirs = new WeakMap<ReadOnlyDirectoryFileSystem, string>()
const at = (fs: ReadOnlyDirectoryFileSystem, path: string): string => join(dirs.get(fs) ?? '/nonexistent', path)

await describeConformance<ReadOnlyDirectoryFileSystem>({
  name: 'ReadOnlyDirectoryFileSystem (example)',
  create: ({ limits }) => {
    const dir = mkdtempSync(join(tmpdir(), 'seamfs-read-only-'))
    const fs = new ReadOnlyDirectoryFileSystem({ ...limits, dir })
    dirs.set(fs, dir)
    return { fs, dispose: () => rmSync(dir, { recursive: true, force: true }) }
  },
  external: {
    writeBytes: ({ fs }, path, bytes) => {
      mkdirSync(dirname(at(fs, path)), { recursive: true })
      writeFileSync(at(fs, path), bytes)
    },
    readBytes: ({ fs }, path) => readFileSync(at(fs, path)),
    remove: ({ fs }, path) => rmSync(at(fs, path), { force: true }),
  },
})

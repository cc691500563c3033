import { mkdirSync, mkdtempSync, readFileSync, rmSync, symlinkSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { dirname, join } from 'node:path'
import { describeConformance, type ConformanceSubject } from '@seamfs/conformance'
import { LocalFileSystem } from '@seamfs/backend-local'

const rootOf = (subject: ConformanceSubject<LocalFileSystem>, path: string): string => join(subject.fs.cwd, path)

await describeConformance<LocalFileSystem>({
  name: 'LocalFileSystem',
  create: () => {
    const root = mkdtempSync(join(tmpdir(), 'seamfs-conformance-'))
    return { fs: new LocalFileSystem({ cwd: root }), dispose: () => rmSync(root, { recursive: true, force: true }) }
  },
  external: {
    // In place (same inode), as an editor or another process would.
    writeBytes: (subject, path, bytes) => {
      mkdirSync(dirname(rootOf(subject, path)), { recursive: true })
      writeFileSync(rootOf(subject, path), bytes)
    },
    readBytes: (subject, path) => readFileSync(rootOf(subject, path)),
    remove: (subject, path) => rmSync(rootOf(subject, path)),
    symlink: (subject, path, target) => {
      mkdirSync(dirname(rootOf(subject, path)), { recursive: true })
      symlinkSync(target, rootOf(subject, path))
    },
  },
  options: { modelRuns: 100 },
})

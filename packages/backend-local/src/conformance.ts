import { chmodSync, mkdirSync, mkdtempSync, readFileSync, rmSync, statSync, symlinkSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { dirname, join } from 'node:path'
import type { ConformanceOptions, ConformanceSubject, ConformanceTuning } from '@seamfs/conformance'
import { LocalFileSystem } from './local-file-system.js'

const hostPath = (subject: ConformanceSubject<LocalFileSystem>, path: string): string => join(subject.fs.cwd, path)

/**
 * Conformance options for LocalFileSystem: a fresh temporary directory per
 * test, and hooks that change files in place, as an editor or another process would.
 */
export function localConformance(tuning: ConformanceTuning = {}, parent = tmpdir()): ConformanceOptions<LocalFileSystem> {
  return {
    name: 'LocalFileSystem',
    create: ({ limits }) => {
      const root = mkdtempSync(join(parent, 'seamfs-conformance-'))
      return { fs: new LocalFileSystem({ ...limits, cwd: root }), dispose: () => rmSync(root, { recursive: true, force: true }) }
    },
    external: {
      writeBytes: (subject, path, bytes) => {
        mkdirSync(dirname(hostPath(subject, path)), { recursive: true })
        writeFileSync(hostPath(subject, path), bytes)
      },
      readBytes: (subject, path) => readFileSync(hostPath(subject, path)),
      remove: (subject, path) => rmSync(hostPath(subject, path)),
      chmod: (subject, path, mode) => chmodSync(hostPath(subject, path), mode),
      mode: (subject, path) => statSync(hostPath(subject, path)).mode & 0o777,
      symlink: (subject, path, target) => {
        mkdirSync(dirname(hostPath(subject, path)), { recursive: true })
        symlinkSync(target, hostPath(subject, path))
      },
    },
    // The built module (from src/ or dist/ alike): racing child processes open the same directory.
    crossProcess: { module: new URL('../dist/conformance.js', import.meta.url).href, descriptor: (subject) => ({ root: subject.fs.cwd }) },
    options: tuning,
  }
}

/** Opens the store a test's subject is on, in another process (the kit's cross-instance races). */
export function open(descriptor: { readonly root: string }): LocalFileSystem {
  return new LocalFileSystem({ cwd: descriptor.root })
}

export default localConformance({ modelRuns: 100 })

import { lstatSync, mkdirSync, readdirSync, readFileSync, realpathSync, rmSync, symlinkSync, writeFileSync } from 'node:fs'
import { mkdtemp, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { LocalFileSystem } from '@seamfs/backend-local'
import { MemoryFileSystem } from '@seamfs/backend-memory'
import { ESCAPES, runSandboxCorpus, type Category, type SandboxFixture } from './sandbox/corpus.js'
import { describe, expect, it } from 'vitest'

/** Every path under `abs`, depth first, without following links. */
function walk(abs: string, entries: (dir: string) => string[], isDir: (path: string) => boolean): string[] {
  const out: string[] = []
  for (const name of entries(abs).sort()) {
    const path = `${abs}/${name}`
    out.push(path)
    if (isDir(path)) out.push(...walk(path, entries, isDir))
  }
  return out
}

const local: SandboxFixture = {
  name: 'LocalFileSystem',
  async create() {
    // realpath: the base must be canonical, like the keys the backend mints (tmpdir may be a link).
    const base = realpathSync(await mkdtemp(join(tmpdir(), 'seamfs-sandbox-')))
    const inner = new LocalFileSystem({ cwd: base })
    return {
      inner,
      base,
      mkdir: (abs) => void mkdirSync(abs, { recursive: true }),
      writeFile: (abs, text) => writeFileSync(abs, text),
      readFile: (abs) => {
        try {
          return readFileSync(abs, 'utf8')
        } catch {
          return undefined
        }
      },
      symlink: (abs, target) => symlinkSync(target, abs),
      remove: (abs) => rmSync(abs, { recursive: true, force: true }),
      listTree: (abs) =>
        walk(
          abs,
          (dir) => readdirSync(dir),
          (path) => lstatSync(path).isDirectory(),
        ),
      dispose: () => rm(base, { recursive: true, force: true }),
    }
  },
}

const memory: SandboxFixture = {
  name: 'MemoryFileSystem',
  async create() {
    const base = '/w'
    const inner = new MemoryFileSystem({ cwd: base })
    const vol = inner.volume
    return {
      inner,
      base,
      mkdir: (abs) => void vol.mkdirSync(abs, { recursive: true }),
      writeFile: (abs, text) => vol.writeFileSync(abs, text),
      readFile: (abs) => {
        try {
          return vol.readFileSync(abs, 'utf8') as string
        } catch {
          return undefined
        }
      },
      symlink: (abs, target) => vol.symlinkSync(target, abs),
      // unlink for files and links: memfs's rmSync follows a link to a directory.
      remove: (abs) => (vol.lstatSync(abs).isDirectory() ? vol.rmSync(abs, { recursive: true }) : vol.unlinkSync(abs)),
      listTree: (abs) =>
        walk(
          abs,
          (dir) => (vol.readdirSync(dir) as unknown[]).map(String),
          (path) => vol.lstatSync(path).isDirectory(),
        ),
      dispose: () => undefined,
    }
  },
}

describe('the escape corpus', () => {
  it('has at least 50 attempts, every required category, and unique names', () => {
    expect(ESCAPES.length).toBeGreaterThanOrEqual(50)
    const required: readonly Category[] = [
      'absolute path',
      '.. in every position',
      './../',
      'sibling sharing the root name',
      'symlinked directory pointing out',
      'new file under a symlinked directory',
      'symlinked file pointing out',
      'symlink swapped between resolve and write',
      'the root itself',
      'trailing slash',
      'NUL byte and malformed text',
      'very long path',
    ]
    for (const category of required)
      expect(
        ESCAPES.some((a) => a.category === category),
        category,
      ).toBe(true)
    expect(new Set(ESCAPES.map((a) => a.label)).size).toBe(ESCAPES.length)
  })
})

runSandboxCorpus(local)
runSandboxCorpus(memory)

import { expect } from 'vitest'
import { FsVersion } from '@seamfs/core/backend'
import { codeOf, type Env, type Kit } from '../kit.js'

/** Every readable file under `dir`, recursively: the store as the contract sees it. */
export async function snapshot(env: Env, dir = '.'): Promise<Record<string, string>> {
  const out: Record<string, string> = {}
  const walk = async (path: string): Promise<void> => {
    for (const entry of await env.fs.listDir(await env.resolve(path))) {
      const child = path === '.' ? entry.name : `${path}/${entry.name}`
      if (entry.type === 'directory') await walk(child)
      else if (entry.type === 'file') out[child] = await env.fs.readText(entry.target).catch(() => '<unreadable>')
      else out[child] = '<other>'
    }
  }
  await walk(dir)
  return out
}

export function writeClauses(kit: Kit): void {
  kit.group('write', {}, () => {
    kit.test('a new file is a create with before null; an existing one an update', async (env) => {
      const created = await env.write('f.txt', 'one\r\n')
      expect(created.operation).toBe('create')
      expect(created.before).toBeNull()
      expect(created.after).toBe('one\n')
      const updated = await env.write('f.txt', 'two\r\nlines')
      expect(updated.operation).toBe('update')
      expect(updated.before).toBe('one\n')
      expect(updated.after).toBe('two\nlines')
    })

    kit.test("the outcome's version equals the next stat's version", async (env) => {
      const { version } = await env.write('v.txt', 'abc')
      expect((await env.fs.stat(await env.resolve('v.txt')))?.version).toBe(version)
      const again = await env.write('v.txt', 'abcd')
      expect(again.version).not.toBe(version)
      expect((await env.fs.stat(await env.resolve('v.txt')))?.version).toBe(again.version)
    })

    kit.test('missing parent directories are created', async (env) => {
      await env.write('a/b/c/d.txt', 'deep')
      expect(await env.read('a/b/c/d.txt')).toBe('deep')
      expect((await env.fs.stat(await env.resolve('a/b')))?.type).toBe('directory')
    })

    kit.test('content is stored as given: CRLF, lone CR and trailing spaces survive', async (env) => {
      const text = 'a\r\nb\rc  \n\n'
      await env.write('raw.txt', text)
      expect(await env.read('raw.txt')).toBe(text)
    })

    kit.test('createIfAbsent creates a missing file', async (env) => {
      const t = await env.resolve('new.txt')
      const outcome = await env.fs.writeText(t, 'fresh', { expected: { kind: 'createIfAbsent' } })
      expect(outcome.operation).toBe('create')
      expect(await env.read('new.txt')).toBe('fresh')
    })

    kit.test('createIfAbsent on an existing file is FS_NOT_OBSERVED and keeps its content', async (env) => {
      await env.write('exists.txt', 'original')
      const t = await env.resolve('exists.txt')
      expect(await codeOf(env.fs.writeText(t, 'clobber', { expected: { kind: 'createIfAbsent' } }))).toBe('FS_NOT_OBSERVED')
      expect(await env.read('exists.txt')).toBe('original')
    })

    kit.test('replaceIfVersion with the current version replaces', async (env) => {
      const { version } = await env.write('r.txt', 'v1')
      const t = await env.resolve('r.txt')
      const outcome = await env.fs.writeText(t, 'v2', { expected: { kind: 'replaceIfVersion', version } })
      expect(outcome.operation).toBe('update')
      expect(await env.read('r.txt')).toBe('v2')
    })

    kit.test('replaceIfVersion with a stale version is FS_STALE_VERSION and keeps the content', async (env) => {
      const { version } = await env.write('r.txt', 'v1')
      await env.write('r.txt', 'v2')
      const t = await env.resolve('r.txt')
      expect(await codeOf(env.fs.writeText(t, 'v3', { expected: { kind: 'replaceIfVersion', version } }))).toBe('FS_STALE_VERSION')
      expect(await env.read('r.txt')).toBe('v2')
    })

    kit.test('replaceIfVersion on a missing file is FS_STALE_VERSION and creates nothing', async (env) => {
      const { version } = await env.write('other.txt', 'x')
      const t = await env.resolve('missing.txt')
      expect(await codeOf(env.fs.writeText(t, 'x', { expected: { kind: 'replaceIfVersion', version } }))).toBe('FS_STALE_VERSION')
      expect(await env.fs.stat(t)).toBeUndefined()
    })

    kit.test('replaceIfVersion with a forged version is FS_STALE_VERSION', async (env) => {
      await env.write('r.txt', 'v1')
      const t = await env.resolve('r.txt')
      const forged = FsVersion('not-a-version-this-backend-made')
      expect(await codeOf(env.fs.writeText(t, 'v2', { expected: { kind: 'replaceIfVersion', version: forged } }))).toBe('FS_STALE_VERSION')
      expect(await env.read('r.txt')).toBe('v1')
    })

    kit.test('a directory target is FS_NOT_REGULAR_FILE and stays a directory', async (env) => {
      await env.write('d/inner.txt', 'x')
      expect(await codeOf(env.fs.writeText(await env.resolve('d'), 'x'))).toBe('FS_NOT_REGULAR_FILE')
      expect((await env.fs.stat(await env.resolve('d')))?.type).toBe('directory')
    })

    kit.test('content with a lone surrogate is FS_NOT_TEXT and nothing is written', async (env) => {
      await env.write('s.txt', 'keep')
      expect(await codeOf(env.fs.writeText(await env.resolve('s.txt'), 'bad \uD800 half'))).toBe('FS_NOT_TEXT')
      expect(await codeOf(env.fs.writeText(await env.resolve('n.txt'), '\uDC00'))).toBe('FS_NOT_TEXT')
      expect(await env.read('s.txt')).toBe('keep')
      expect(await env.names()).toEqual(['s.txt'])
    })

    kit.test('a failed or aborted write leaves the old content and no residue in the listing', async (env) => {
      const { version } = await env.write('w/f.txt', 'old')
      await env.write('w/g.txt', 'other')
      const before = await snapshot(env)
      const t = await env.resolve('w/f.txt')
      const aborted = AbortSignal.abort()
      const h = await env.resolve('w/h.txt')
      const failures = [
        () => env.fs.writeText(t, 'new', { expected: { kind: 'createIfAbsent' } }),
        () => env.fs.writeText(t, 'new', { signal: aborted }),
        () => env.fs.writeText(t, '\uD800'),
        () => env.fs.writeText(h, 'new', { expected: { kind: 'replaceIfVersion', version } }),
      ]
      for (const failure of failures) expect(await codeOf(failure)).not.toBe('ok')
      await env.write('w/g.txt', 'other')
      expect(await snapshot(env)).toEqual(before)
      expect(await env.names('w')).toEqual(['f.txt', 'g.txt'])
    })
  })

  kit.group('write: symlinks', { caps: ['symlinks'], hooks: ['symlink'] }, () => {
    kit.test('writing through a symlink changes its target and keeps the link', async (env) => {
      await env.write('real.txt', 'one')
      await env.symlink('link.txt', 'real.txt')
      await env.write('link.txt', 'two')
      expect(await env.read('real.txt')).toBe('two')
      expect((await env.fs.lstat('link.txt'))?.type).toBe('symlink')
    })
  })

  kit.group('atomicity', {}, () => {
    kit.test(
      'a reader that reads continuously only ever sees one of two contents, whole',
      async (env) => {
        const size = kit.tuning.atomicityBytes
        const a = 'A'.repeat(size - 6) + '\nA-end'
        const b = 'b'.repeat(size - 3) + '\n中'
        await env.write('atomic.txt', a)
        const t = await env.resolve('atomic.txt')
        let writing = true
        let reads = 0
        const torn: number[] = []
        const writer = (async () => {
          try {
            for (let i = 0; i < kit.tuning.atomicityWrites; i++) await env.fs.writeText(t, i % 2 === 0 ? b : a)
          } finally {
            writing = false
          }
        })()
        const reader = (async () => {
          while (writing && torn.length === 0) {
            const seen = await env.fs.readText(t)
            reads++
            if (seen !== a && seen !== b) torn.push(seen.length)
          }
        })()
        await Promise.all([writer, reader])
        expect(torn).toEqual([])
        expect(reads).toBeGreaterThan(0)
      },
      120_000,
    )
  })
}

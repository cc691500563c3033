import { expect, it } from 'vitest'
import { FsVersion, type FsTarget } from '@seamfs/core/backend'
import { codeOf, type Env, type Kit } from '../kit.js'
import { expectSameBytes, expectSameText, sizeLabel, sizedText, THRESHOLD_SIZES, utf8 } from './fixtures.js'
import { writeRaceClauses } from './write-races.js'

/** How deep {@link snapshot} walks before it calls the tree endless. */
const SNAPSHOT_MAX_DEPTH = 32
/** How many entries {@link snapshot} takes before it calls the tree endless. */
const SNAPSHOT_MAX_ENTRIES = 20_000

/**
 * Every readable file under `dir`, recursively: the store as the contract sees it. A
 * listing that holds its own directory or an ancestor (a broken backend) fails with a
 * message saying so, as do trees deeper or larger than any test makes: never an
 * unbounded walk.
 */
export async function snapshot(env: Env, dir = '.'): Promise<Record<string, string>> {
  const out: Record<string, string> = {}
  let entries = 0
  const walk = async (path: string, target: FsTarget, ancestors: ReadonlySet<string>): Promise<void> => {
    if (ancestors.has(target.targetKey)) {
      throw new Error(`snapshot: the listing reached "${path}", whose targetKey is its own ancestor's: a listing contains its own directory`)
    }
    if (ancestors.size >= SNAPSHOT_MAX_DEPTH) throw new Error(`snapshot: "${path}" is nested more than ${SNAPSHOT_MAX_DEPTH} directories deep`)
    const inside = new Set(ancestors).add(target.targetKey)
    for (const entry of await env.fs.listDir(target)) {
      if (++entries > SNAPSHOT_MAX_ENTRIES) throw new Error(`snapshot: more than ${SNAPSHOT_MAX_ENTRIES} entries under "${dir}"`)
      const child = path === '.' ? entry.name : `${path}/${entry.name}`
      if (entry.type === 'directory') await walk(child, entry.target, inside)
      else if (entry.type === 'file') out[child] = await env.fs.readText(entry.target).catch(() => '<unreadable>')
      else out[child] = '<other>'
    }
  }
  await walk(dir, await env.resolve(dir), new Set())
  return out
}

export function writeClauses(kit: Kit): void {
  kit.group('write', { writes: true }, () => {
    kit.test('a new file is a create with before null; an existing one an update', async (env) => {
      const created = await env.write('f.txt', 'one\r\n')
      expect(created.operation).toBe('create')
      expect(created.before).toBeNull()
      expect(created.after).toBe('one\n')
      const updated = await env.write('f.txt', 'two\r\nlines')
      expect(updated.operation).toBe('update')
      expect(updated.before).toBe('one\n')
      expect(updated.after).toBe('two\nlines')
      // An empty file exists: overwriting it is an update too.
      expect((await env.write('empty.txt', '')).operation).toBe('create')
      expect((await env.write('empty.txt', 'x')).operation, 'overwriting an empty file').toBe('update')
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

  kit.group('write: shapes', { writes: true }, () => {
    kit.test('content that begins with U+FEFF is stored as given; a read drops exactly one leading BOM', async (env) => {
      await env.write('one.txt', '\uFEFFhello')
      await env.write('two.txt', '\uFEFF\uFEFFhello')
      await env.write('inner.txt', 'a\uFEFFb')
      expect(await env.read('one.txt')).toBe('hello')
      expect(await env.read('two.txt')).toBe('\uFEFFhello')
      expect(await env.read('inner.txt')).toBe('a\uFEFFb')
      // Content without one over a file with a BOM: stored as given, no BOM carried over.
      await env.write('over.txt', '\uFEFFold')
      await env.write('over.txt', 'plain')
      expect((await env.fs.stat(await env.resolve('over.txt')))?.size).toBe(5)
      if (kit.unmet({ hooks: ['readBytes'] }) !== undefined) return
      expect(Array.from(await env.readBytes('over.txt'))).toEqual(Array.from(utf8('plain')))
      expect(Array.from(await env.readBytes('one.txt'))).toEqual([0xef, 0xbb, 0xbf, ...utf8('hello')])
      expect(Array.from(await env.readBytes('two.txt'))).toEqual([0xef, 0xbb, 0xbf, 0xef, 0xbb, 0xbf, ...utf8('hello')])
    })

    kit.test("the outcome's before is the previous text (LF-normalized, without BOM), also after a same-size rewrite", async (env) => {
      await env.write('b.txt', '\uFEFFold\r\nline\r')
      expect((await env.write('b.txt', 'new')).before).toBe('old\nline\r')
      await env.write('c.txt', '\uFEFF\uFEFFkept')
      expect((await env.write('c.txt', 'x')).before).toBe('\uFEFFkept')
      // A same-size rewrite is where a backend reusing the file's buffer reports the new bytes as before.
      await env.write('s.txt', 'same size A\r\n')
      for (const next of ['same size B\r\n', 'same size C\r\n']) {
        const previous = await env.read('s.txt')
        const outcome = await env.write('s.txt', next)
        expect(outcome.before).toBe(previous.replace('\r\n', '\n'))
        expect(outcome.after).toBe(next.replace('\r\n', '\n'))
      }
    })

    kit.test('content round-trips whole at sizes across chunk and part thresholds', async (env) => {
      const bytes = kit.unmet({ hooks: ['readBytes'] }) === undefined
      for (const size of THRESHOLD_SIZES) {
        const text = sizedText(size, `n${size}-`)
        const outcome = await env.write(`s${size}.txt`, text)
        const t = await env.resolve(`s${size}.txt`)
        expect(outcome.operation, sizeLabel(size)).toBe('create')
        expect((await env.fs.stat(t))?.size, `stat size at ${sizeLabel(size)}`).toBe(size)
        expectSameText(await env.fs.readText(t), text, `readText at ${sizeLabel(size)}`)
        if (bytes) expectSameBytes(await env.readBytes(`s${size}.txt`), utf8(text), `stored bytes at ${sizeLabel(size)}`)
      }
    })

    kit.test('a shorter overwrite leaves nothing of the longer content, at every threshold size', async (env) => {
      const t = await env.resolve('shrink.txt')
      for (const size of [...THRESHOLD_SIZES].reverse()) {
        const text = sizedText(size, `r${size}-`)
        await env.fs.writeText(t, text)
        expect((await env.fs.stat(t))?.size, `stat size at ${sizeLabel(size)}`).toBe(size)
        expectSameText(await env.fs.readText(t), text, `readText after an overwrite down to ${sizeLabel(size)}`)
      }
    })

    kit.test('createIfAbsent on a directory is FS_NOT_REGULAR_FILE and it stays a directory', async (env) => {
      await env.write('d/inner.txt', 'x')
      const before = await snapshot(env)
      const d = await env.resolve('d')
      expect(await codeOf(env.fs.writeText(d, 'x', { expected: { kind: 'createIfAbsent' } }))).toBe('FS_NOT_REGULAR_FILE')
      expect((await env.fs.stat(d))?.type).toBe('directory')
      expect(await snapshot(env)).toEqual(before)
    })

    kit.test("replaceIfVersion on a directory, with the directory's own version, is FS_NOT_REGULAR_FILE", async (env) => {
      await env.write('d/inner.txt', 'x')
      const d = await env.resolve('d')
      const version = (await env.fs.stat(d))?.version
      expect(version).toBeDefined()
      const expected = { kind: 'replaceIfVersion', version: version as FsVersion } as const
      expect(await codeOf(env.fs.writeText(d, 'x', { expected }))).toBe('FS_NOT_REGULAR_FILE')
      expect(await codeOf(env.fs.editText(d, { oldString: 'x', newString: 'y', replaceAll: false }, { expected: { version: version as FsVersion } }))).toBe(
        'FS_NOT_REGULAR_FILE',
      )
      expect((await env.fs.stat(d))?.type).toBe('directory')
      expect(await env.names('d')).toEqual(['inner.txt'])
    })

    // Resolving `p/child.txt` while `p` is missing succeeds (a missing path resolves), so the
    // write itself, not resolve, meets the file that `p` has become.
    kit.test('a write whose parent became a file after resolve is FS_NOT_FOUND and writes nothing', async (env) => {
      const child = await env.resolve('p/child.txt')
      const deep = await env.resolve('q/r/child.txt')
      await env.write('p', 'parent p')
      await env.write('q', 'parent q')
      const before = await snapshot(env)
      expect(await codeOf(env.fs.writeText(child, 'x'))).toBe('FS_NOT_FOUND')
      expect(await codeOf(env.fs.writeText(deep, 'x'))).toBe('FS_NOT_FOUND')
      expect(await codeOf(env.fs.writeText(child, 'x', { expected: { kind: 'createIfAbsent' } }))).toBe('FS_NOT_FOUND')
      expect(await snapshot(env)).toEqual(before)
      expect(await env.read('p')).toBe('parent p')
    })

    // Issue 18: a backend asked for no previous content (beforeMaxBytes 0) takes its shortest path;
    // everything but `before` must stay as without it.
    kit.test("before: false: the outcome's before is null; create/update, version and guards as without it", async (env) => {
      const t = await env.resolve('nb.txt')
      const created = await env.fs.writeText(t, 'one\r\n', { before: false })
      expect(created).toEqual({ operation: 'create', version: created.version, before: null, after: 'one\n' })
      expect((await env.fs.stat(t))?.version).toBe(created.version)
      const updated = await env.fs.writeText(t, 'two', { before: false })
      expect([updated.operation, updated.before]).toEqual(['update', null])
      expect(updated.version).not.toBe(created.version)
      expect((await env.fs.stat(t))?.version).toBe(updated.version)
      const stale = { kind: 'replaceIfVersion', version: created.version } as const
      expect(await codeOf(env.fs.writeText(t, 'x', { before: false, expected: stale }))).toBe('FS_STALE_VERSION')
      expect(await codeOf(env.fs.writeText(t, 'x', { before: false, expected: { kind: 'createIfAbsent' } }))).toBe('FS_NOT_OBSERVED')
      expect(await env.read('nb.txt')).toBe('two')
      const replaced = await env.fs.writeText(t, 'three', { before: false, expected: { kind: 'replaceIfVersion', version: updated.version } })
      expect([replaced.operation, replaced.before]).toEqual(['update', null])
      expect((await env.fs.stat(t))?.version).toBe(replaced.version)
      const fresh = await env.resolve('nb-new.txt')
      const made = await env.fs.writeText(fresh, 'new', { before: false, expected: { kind: 'createIfAbsent' } })
      expect([made.operation, made.before]).toEqual(['create', null])
      expect(await env.read('nb-new.txt')).toBe('new')
    })

    kit.test('before: false: a missing file, a directory, a path through a file and a malformed before fail as without it', async (env) => {
      const { version } = await env.write('other.txt', 'x')
      await env.write('d/inner.txt', 'x')
      const child = await env.resolve('p/child.txt')
      await env.write('p', 'parent p')
      const before = await snapshot(env)
      const missing = await env.resolve('missing.txt')
      const d = await env.resolve('d')
      const dirVersion = (await env.fs.stat(d))?.version as FsVersion
      const replace = (v: FsVersion) => ({ before: false, expected: { kind: 'replaceIfVersion', version: v } }) as const
      expect(await codeOf(env.fs.writeText(missing, 'x', replace(version))), 'replaceIfVersion on a missing file').toBe('FS_STALE_VERSION')
      expect(await codeOf(env.fs.writeText(d, 'x', { before: false })), 'a directory').toBe('FS_NOT_REGULAR_FILE')
      expect(await codeOf(env.fs.writeText(d, 'x', replace(dirVersion))), "a directory, with the directory's version").toBe('FS_NOT_REGULAR_FILE')
      expect(await codeOf(env.fs.writeText(d, 'x', { before: false, expected: { kind: 'createIfAbsent' } })), 'createIfAbsent on a directory').toBe(
        'FS_NOT_REGULAR_FILE',
      )
      expect(await codeOf(env.fs.writeText(child, 'x', { before: false })), 'a parent that became a file').toBe('FS_NOT_FOUND')
      expect(await codeOf(env.fs.writeText(missing, 'x', { before: 'no' as never })), 'a malformed before').toBe('FS_UNSUPPORTED')
      expect(await snapshot(env)).toEqual(before)
    })

    kit.test('a malformed guard is FS_UNSUPPORTED, never dropped, and nothing is written', async (env) => {
      await env.write('g.txt', 'kept')
      const t = await env.resolve('g.txt')
      const fresh = await env.resolve('fresh.txt')
      const malformed: readonly unknown[] = [
        null,
        'createIfAbsent',
        {},
        { kind: 'replaceIfVersion' },
        { kind: 'replaceIfVersion', version: 42 },
        { kind: 'replaceIfVersion', version: null },
        { kind: 'CreateIfAbsent' },
        { version: 'v' },
      ]
      for (const expected of malformed) {
        const shown = JSON.stringify(expected)
        expect(await codeOf(env.fs.writeText(t, 'clobbered', { expected: expected as never })), shown).toBe('FS_UNSUPPORTED')
        expect(await codeOf(env.fs.writeText(fresh, 'created', { expected: expected as never })), shown).toBe('FS_UNSUPPORTED')
      }
      expect(await env.read('g.txt')).toBe('kept')
      expect(await env.names()).toEqual(['g.txt'])
    })

    kit.test('a guarded write or edit with an aborted signal is FS_ABORTED and changes nothing', async (env) => {
      const { version } = await env.write('a.txt', 'old text')
      const t = await env.resolve('a.txt')
      const fresh = await env.resolve('fresh.txt')
      const signal = AbortSignal.abort()
      const before = await snapshot(env)
      expect(await codeOf(env.fs.writeText(t, 'new', { signal, expected: { kind: 'replaceIfVersion', version } }))).toBe('FS_ABORTED')
      expect(await codeOf(env.fs.writeText(fresh, 'new', { signal, expected: { kind: 'createIfAbsent' } }))).toBe('FS_ABORTED')
      expect(await codeOf(env.fs.editText(t, { oldString: 'old', newString: 'new', replaceAll: false }, { signal, expected: { version } }))).toBe('FS_ABORTED')
      expect(await snapshot(env)).toEqual(before)
      expect((await env.fs.stat(t))?.version).toBe(version)
    })
  })

  kit.group('write: re-created files', { writes: true, hooks: ['remove'] }, () => {
    const title = 'a version of deleted content never guards a re-created file, even with the same content and size'
    // A content-hash version is by definition equal for equal content: there, ABA of the
    // same bytes is what the declared versionSource promises, not a break.
    if (kit.caps.versionSource === 'content-hash') it.skip(`${title} (skipped: versionSource is content-hash)`, () => undefined)
    else
      kit.test(title, async (env) => {
        const t = await env.resolve('aba.txt')
        const { version } = await env.fs.writeText(t, 'same content')
        expect((await env.fs.stat(t))?.version).toBe(version)
        await env.remove('aba.txt')
        await env.fs.writeText(t, 'same content')
        expect(await codeOf(env.fs.writeText(t, 'overwritten', { expected: { kind: 'replaceIfVersion', version } }))).toBe('FS_STALE_VERSION')
        const edit = { oldString: 'same', newString: 'edited', replaceAll: false }
        expect(await codeOf(env.fs.editText(t, edit, { expected: { version } }))).toBe('FS_STALE_VERSION')
        expect(await env.read('aba.txt')).toBe('same content')
      })
  })

  kit.group('write: symlinks', { writes: true, caps: ['symlinks'], hooks: ['symlink'] }, () => {
    kit.test('writing through a symlink changes its target and keeps the link', async (env) => {
      await env.write('real.txt', 'one')
      await env.symlink('link.txt', 'real.txt')
      await env.write('link.txt', 'two')
      expect(await env.read('real.txt')).toBe('two')
      expect((await env.fs.lstat('link.txt'))?.type).toBe('symlink')
    })
  })

  writeRaceClauses(kit)
}

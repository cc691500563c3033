import type { FileSystem } from '@seamfs/core'
import { describe, expect, it, onTestFinished } from 'vitest'
import { createSeamfsBackend, EMPTY_CONTENT_WARNING, type SeamfsBackend } from '../src/index.js'

/** A fresh store for one test: the filesystem, the directory the agent sees as `/`, and its cleanup. */
export interface Fixture {
  readonly fs: FileSystem
  readonly root: string
  dispose(): Promise<void>
}

const PNG = new Uint8Array([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a, 0, 0, 0, 13, 0x49, 0x48, 0x44, 0x52, 0xff, 0x00])

/**
 * Every deepagents backend operation on `make()`'s filesystem, through the backend alone (what
 * deepagents' tools call). Each test seeds its own files under a fresh root.
 */
export function describeBackend(name: string, make: () => Promise<Fixture>): void {
  describe(`SeamfsBackend on ${name}`, () => {
    async function setup(files: Record<string, string | Uint8Array> = {}, maxTransferBytes?: number): Promise<{ backend: SeamfsBackend; fx: Fixture }> {
      const fx = await make()
      onTestFinished(() => fx.dispose())
      for (const [path, content] of Object.entries(files)) {
        const target = await fx.fs.resolve(path, { cwd: fx.root })
        if (typeof content === 'string') await fx.fs.writeText(target, content)
        else await fx.fs.writeBytes(target, content)
      }
      return {
        backend: createSeamfsBackend({ fs: fx.fs, root: fx.root, session: 'suite', ...(maxTransferBytes === undefined ? {} : { maxTransferBytes }) }),
        fx,
      }
    }
    const text = async (fx: Fixture, path: string): Promise<string> => fx.fs.readText(await fx.fs.resolve(path, { cwd: fx.root }))

    it('ls lists direct children, directories with a trailing slash, files with their size where the store lists it', async () => {
      const { backend } = await setup({ 'a.txt': 'abc', 'src/b.ts': 'x', 'src/deep/c.ts': 'y' })
      const root = await backend.ls('/')
      expect(root.files?.map((f) => [f.path, f.is_dir])).toEqual([
        ['/a.txt', false],
        ['/src/', true],
      ])
      expect([undefined, 3]).toContain(root.files?.[0]?.size)
      expect((await backend.ls('/src')).files?.map((f) => f.path)).toEqual(['/src/b.ts', '/src/deep/'])
      expect(await backend.ls('/missing')).toEqual({ error: 'cannot list "/missing": not found' })
      expect(await backend.ls('/a.txt')).toEqual({ error: 'cannot list "/a.txt": not a directory' })
    })

    it('read returns a 0-based window of raw lines with pagination, and errors as strings', async () => {
      const { backend } = await setup({ 'five.txt': 'l1\nl2\nl3\nl4\nl5\n', 'empty.txt': '' })
      expect(await backend.read('/five.txt', 1, 2)).toEqual({
        content: 'l2\nl3',
        mimeType: 'text/plain',
        totalLines: 5,
        startLine: 2,
        endLine: 3,
        nextOffset: 3,
      })
      expect(await backend.read('/five.txt', 3)).toEqual({ content: 'l4\nl5', mimeType: 'text/plain', totalLines: 5, startLine: 4, endLine: 5 })
      expect(await backend.read('/empty.txt')).toEqual({ content: EMPTY_CONTENT_WARNING, mimeType: 'text/plain' })
      expect(await backend.read('/missing.txt')).toEqual({ error: 'cannot read "/missing.txt": not found' })
      expect((await backend.read('/five.txt', 9)).error).toMatch(/out of range/)
    })

    it('grep matches the pattern literally, filters by glob and path, and caps with maxCount', async () => {
      const { backend } = await setup({ 'a.ts': 'call(a.b)\nab\n', 'sub/b.md': 'x a.b y\n', 'sub/c.ts': 'a.b(\n' })
      expect(await backend.grep('a.b(')).toEqual({ matches: [{ path: '/sub/c.ts', line: 1, text: 'a.b(' }] })
      expect((await backend.grep('a.b', '/', '*.ts'))?.matches?.map((m) => `${m.path}:${m.line}`)).toEqual(['/a.ts:1', '/sub/c.ts:1'])
      expect((await backend.grep('a.b', '/sub'))?.matches?.map((m) => m.path)).toEqual(['/sub/b.md', '/sub/c.ts'])
      expect((await backend.grep('a.b', '/sub/b.md'))?.matches).toEqual([{ path: '/sub/b.md', line: 1, text: 'x a.b y' }])
      expect(await backend.grep('a.b', '/', null, 1)).toEqual({ matches: [{ path: '/a.ts', line: 1, text: 'call(a.b)' }], truncated: true })
      expect(await backend.grep('nothing here')).toEqual({ matches: [] })
    })

    it('glob finds files under a path; a leading slash in the pattern is the search root', async () => {
      const { backend } = await setup({ 'a.ts': '', 'b.md': '', 'src/c.ts': '', 'src/d/e.ts': '' })
      expect((await backend.glob('**/*.ts')).files?.map((f) => f.path)).toEqual(['/a.ts', '/src/c.ts', '/src/d/e.ts'])
      expect((await backend.glob('/src/**/*.ts')).files?.map((f) => f.path)).toEqual(['/src/c.ts', '/src/d/e.ts'])
      expect((await backend.glob('*.ts', '/src/d')).files?.map((f) => f.path)).toEqual(['/src/d/e.ts'])
      expect(await backend.glob('*.py')).toEqual({ files: [] })
    })

    it('write creates a new file, and replaces an existing one only after a read of its current version', async () => {
      const { backend, fx } = await setup({ 'old.txt': 'old\n' })
      expect(await backend.write('/new/file.txt', 'new\n')).toEqual({ path: '/new/file.txt', filesUpdate: null })
      expect(await text(fx, 'new/file.txt')).toBe('new\n')
      expect(await backend.write('/old.txt', 'blind\n')).toEqual({
        error: 'Error: cannot overwrite existing "/old.txt" without reading it first — read the file, then retry',
      })
      expect(await text(fx, 'old.txt')).toBe('old\n')
      await backend.read('/old.txt')
      expect(await backend.write('/old.txt', 'seen\n')).toEqual({ path: '/old.txt', filesUpdate: null })
      expect(await text(fx, 'old.txt')).toBe('seen\n')
    })

    it('edit replaces once or all, and refuses an ambiguous or missing old string with the file unchanged', async () => {
      const { backend, fx } = await setup({ 'e.txt': 'one two two\n' })
      expect(await backend.edit('/e.txt', 'one', 'ONE')).toEqual({ error: 'Error: edit requires reading "/e.txt" first — read the file, then retry' })
      await backend.read('/e.txt')
      expect(await backend.edit('/e.txt', 'two', '2')).toEqual({
        error: 'Error: old_string matched 2 times in "/e.txt"; provide a more specific old_string or set replace_all to true',
      })
      expect(await backend.edit('/e.txt', 'three', '3')).toEqual({ error: 'Error: old_string was not found in "/e.txt"' })
      expect(await text(fx, 'e.txt')).toBe('one two two\n')
      expect(await backend.edit('/e.txt', 'two', '2', true)).toEqual({ path: '/e.txt', filesUpdate: null, occurrences: 2 })
      expect(await backend.edit('/e.txt', 'one', '1')).toEqual({ path: '/e.txt', filesUpdate: null, occurrences: 1 })
      expect(await text(fx, 'e.txt')).toBe('1 2 2\n')
    })

    it('upload and download move bytes as stored, binary included, and refuse what is too large', async () => {
      const { backend, fx } = await setup({ 'dir/x.txt': 'x' }, 64)
      const big = new Uint8Array(65).fill(7)
      expect(
        await backend.uploadFiles([
          ['/img/p.png', PNG],
          ['/big.bin', big],
          ['/../out.txt', PNG],
        ]),
      ).toEqual([
        { path: '/img/p.png', error: null },
        { path: '/big.bin', error: 'invalid_path' },
        { path: '/../out.txt', error: 'invalid_path' },
      ])
      expect(await fx.fs.stat(await fx.fs.resolve('big.bin', { cwd: fx.root }))).toBeUndefined()
      await fx.fs.writeBytes(await fx.fs.resolve('big.bin', { cwd: fx.root }), big)
      const got = await backend.downloadFiles(['/img/p.png', '/big.bin', '/missing', '/dir', '/../x'])
      expect(got).toEqual([
        { path: '/img/p.png', content: PNG, error: null },
        { path: '/big.bin', content: null, error: 'invalid_path' },
        { path: '/missing', content: null, error: 'file_not_found' },
        { path: '/dir', content: null, error: 'is_directory' },
        { path: '/../x', content: null, error: 'invalid_path' },
      ])
    })

    it('a binary path reads as bytes with its MIME type and writes from base64', async () => {
      const { backend, fx } = await setup({ 'p.png': PNG })
      expect(await backend.read('/p.png')).toEqual({ content: PNG, mimeType: 'image/png' })
      const base64 = Buffer.from([1, 2, 3]).toString('base64')
      expect(await backend.write('/q.png', base64)).toEqual({ path: '/q.png', filesUpdate: null })
      expect([...(await fx.fs.readBytes(await fx.fs.resolve('q.png', { cwd: fx.root })))]).toEqual([1, 2, 3])
      await fx.fs.writeBytes(await fx.fs.resolve('p.png', { cwd: fx.root }), new Uint8Array([9]))
      expect((await backend.write('/p.png', base64)).error).toBe('Error: cannot write "/p.png": file changed since it was read — re-read the file, then retry')
      expect(await backend.readRaw('/p.png')).toMatchObject({ data: { content: new Uint8Array([9]), mimeType: 'image/png' } })
      expect(await backend.readRaw('/missing.txt')).toEqual({ error: 'cannot read "/missing.txt": not found' })
    })

    it('delete removes a file read first and an empty directory, never an unread file, a tree or the root', async () => {
      const { backend, fx } = await setup({ 'f.txt': 'f', 'tree/a.txt': 'a' })
      await fx.fs.createDirectory(await fx.fs.resolve('empty', { cwd: fx.root }))
      expect(await backend.delete('/f.txt')).toEqual({ error: 'Error: remove requires reading "/f.txt" first — read the file, then retry' })
      await backend.read('/f.txt')
      expect(await backend.delete('/f.txt')).toEqual({ path: '/f.txt', filesUpdate: null })
      expect(await backend.delete('/empty')).toEqual({ path: '/empty', filesUpdate: null })
      expect((await backend.delete('/tree')).error).toMatch(/^Error: cannot delete "\/tree": directory not empty/)
      expect((await backend.delete('/')).error).toMatch(/^Error: cannot delete "\/": the agent's root is never deleted/)
      expect((await backend.ls('/')).files?.map((f) => f.path)).toEqual(['/tree/'])
    })

    it('refuses ".." before any I/O, in every operation', async () => {
      const { backend } = await setup({ 'a.txt': 'a' })
      const refused = 'cannot resolve "/../a.txt": path traversal is not allowed (no "..", "~" or "\\")'
      expect(await backend.read('/../a.txt')).toEqual({ error: refused })
      expect(await backend.write('/../a.txt', 'x')).toEqual({ error: `Error: ${refused}` })
      expect(await backend.edit('/../a.txt', 'a', 'b')).toEqual({ error: `Error: ${refused}` })
      expect((await backend.ls('/sub/../..')).error).toMatch(/path traversal is not allowed/)
      expect((await backend.glob('*', '/..')).error).toMatch(/path traversal is not allowed/)
      expect((await backend.grep('a', '/..')).error).toMatch(/path traversal is not allowed/)
      expect((await backend.delete('/../a.txt')).error).toMatch(/path traversal is not allowed/)
    })
  })
}

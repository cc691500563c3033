import { expect } from 'vitest'
import { codeOf, type Kit } from '../kit.js'

/** Orders by UTF-8 bytes: an algorithm independent of the one backends use, same order as code points. */
export function byUtf8Bytes(a: string, b: string): number {
  const x = new TextEncoder().encode(a)
  const y = new TextEncoder().encode(b)
  const n = Math.min(x.length, y.length)
  for (let i = 0; i < n; i++) {
    if (x[i] !== y[i]) return (x[i] as number) - (y[i] as number)
  }
  return x.length - y.length
}

/** Names whose code-point order differs from locale order and from UTF-16 order. */
export const ORDER_NAMES: readonly string[] = ['b', 'B', 'a', 'A', '_x', '-x', '10', '9', '1', 'é', 'e', 'Z', '中', '🐂', 'ｚ', '\uFFFD', '~', '.hidden']

export const HOSTILE_NAMES: readonly string[] = ['🐂🍺中文.docx', "a  b !@#$%^&()_+-=;',.txt", '<x>&amp;"q".txt', ' lead and trail ']

/** More entries than a store's page (S3 lists 1,000 keys, SFTP servers about 100 names): files and directories. */
const PAGED_NAMES = {
  files: Array.from({ length: 1060 }, (_, i) => (i % 7 === 3 ? `${i}é中` : i % 11 === 5 ? `F${i}🐂` : `f${i}`)),
  dirs: Array.from({ length: 40 }, (_, i) => `d${i * 27}`),
}

function utf8Length(text: string): number {
  return new TextEncoder().encode(text).length
}

/** Runs `job` on every item, `size` at a time. */
async function inBatches<T>(items: readonly T[], size: number, job: (item: T, index: number) => Promise<unknown>): Promise<void> {
  for (let at = 0; at < items.length; at += size) await Promise.all(items.slice(at, at + size).map((item, i) => job(item, at + i)))
}

export function listClauses(kit: Kit): void {
  kit.group('listing', {}, () => {
    kit.test('entries are in Unicode code-point order (case, digits, punctuation, astral)', async (env) => {
      for (const name of ORDER_NAMES) await env.write(`o/${name}`, name)
      expect(await env.names('o')).toEqual([...ORDER_NAMES].sort(byUtf8Bytes))
    })

    kit.test('entries report file and directory types and resolved targets', async (env) => {
      await env.write('l/file.txt', 'abc')
      await env.write('l/sub/inner.txt', 'x')
      const entries = await env.fs.listDir(await env.resolve('l'))
      expect(entries.map((e) => [e.name, e.type])).toEqual([
        ['file.txt', 'file'],
        ['sub', 'directory'],
      ])
      const file = entries[0]
      expect(file?.target.targetKey).toBe((await env.resolve('l/file.txt')).targetKey)
      if (file !== undefined) expect(await env.fs.readText(file.target)).toBe('abc')
      if (file?.size !== undefined) expect(file.size).toBe(3)
      if (file?.version !== undefined) expect(file.version).toBe((await env.fs.stat(file.target))?.version)
    })

    kit.test(
      'a file entry has the size and version stat gives it, whatever its bytes (empty, BOM, NUL, multi-byte, CRLF), also after an overwrite',
      async (env) => {
        const shapes: Record<string, string> = { 'empty.txt': '', 'bom.txt': '\ufeffbom', 'nul.txt': 'a\u0000b', 'wide.txt': 'é中🐂', 'crlf.txt': 'a\r\nb' }
        const agree = async (when: string): Promise<void> => {
          for (const entry of await env.fs.listDir(await env.resolve('s'))) {
            const info = await env.fs.stat(entry.target)
            expect(entry.type, `${when}: type of ${entry.name}`).toBe(info?.type)
            if (entry.size !== undefined) expect(entry.size, `${when}: listed size of ${entry.name}`).toBe(info?.size)
            if (entry.version !== undefined) expect(entry.version, `${when}: listed version of ${entry.name}`).toBe(info?.version)
          }
        }
        for (const [name, text] of Object.entries(shapes)) await env.write(`s/${name}`, text)
        await agree('written')
        // Overwritten once listed: a listing that remembers what it saw is caught here.
        for (const [name, text] of Object.entries(shapes)) await env.write(`s/${name}`, `${text}+`)
        await agree('overwritten')
      },
    )

    kit.test('hostile names round-trip through write, list and read', async (env) => {
      for (const name of HOSTILE_NAMES) await env.write(`h/${name}`, name)
      await env.write('h/</x>', 'slash splits it')
      expect(await env.names('h')).toEqual([...HOSTILE_NAMES, '<'].sort(byUtf8Bytes))
      expect(await env.names('h/<')).toEqual(['x>'])
      for (const name of HOSTILE_NAMES) expect(await env.read(`h/${name}`)).toBe(name)
    })

    kit.test('a missing directory is FS_NOT_FOUND; a file is FS_NOT_DIRECTORY', async (env) => {
      await env.write('f.txt', 'x')
      expect(await codeOf(env.names('nothing'))).toBe('FS_NOT_FOUND')
      expect(await codeOf(env.names('f.txt'))).toBe('FS_NOT_DIRECTORY')
    })

    kit.test('a listing larger than any store page (1,100 entries, files and directories) is complete, in order, without duplicates', async (env) => {
      const { files, dirs } = PAGED_NAMES
      // Through the filesystem for some, through the store (cheaper on remote stores) for the rest.
      const viaStore = kit.unmet({ hooks: ['writeBytes'] }) === undefined
      const paths = [...files.map((n) => `big/${n}`), ...dirs.map((d) => `big/${d}/inner.txt`)]
      await inBatches(paths, 100, async (path, i) => (viaStore && i % 20 !== 0 ? env.writeBytes(path, path) : env.write(path, path)))
      const entries = await env.fs.listDir(await env.resolve('big'))
      const names = entries.map((e) => e.name)
      expect(
        names.filter((n, i) => names.indexOf(n) !== i),
        'names listed twice',
      ).toEqual([])
      const listed = new Set(names)
      const expected = [...files, ...dirs]
      expect(
        expected.filter((n) => !listed.has(n)),
        'names missing from the listing',
      ).toEqual([])
      expect(names.length).toBe(expected.length)
      expect(names).toEqual(expected.sort(byUtf8Bytes))
      const directories = new Set(dirs)
      expect(entries.filter((e) => e.type !== (directories.has(e.name) ? 'directory' : 'file')).map((e) => [e.name, e.type])).toEqual([])
      for (const e of entries) if (e.size !== undefined && e.type === 'file') expect(e.size, `size of ${e.name}`).toBe(utf8Length(`big/${e.name}`))
      for (const e of [entries[0], entries[550], entries.at(-1)]) {
        if (e?.version !== undefined) expect(e.version, `version of ${e.name}`).toBe((await env.fs.stat(e.target))?.version)
      }
    })
  })

  kit.group('listing: newline in names', { caps: ['newlineInNames'] }, () => {
    kit.test('a name with a newline is listed as one entry', async (env) => {
      await env.write('nl/new\nline.txt', 'x')
      expect(await env.names('nl')).toEqual(['new\nline.txt'])
    })
  })

  kit.group('listing: stored bytes', { hooks: ['writeBytes'] }, () => {
    kit.test('works on a directory full of binary files (no content is read)', async (env) => {
      const names: string[] = []
      for (let i = 0; i < 20; i++) {
        const bytes = Uint8Array.from({ length: 64 }, (_, j) => (i * 31 + j * 7) % 256)
        bytes[0] = 0
        names.push(`bin${i}.dat`)
        await env.writeBytes(`bin/bin${i}.dat`, bytes)
      }
      const entries = await env.fs.listDir(await env.resolve('bin'))
      expect(entries.map((e) => e.name)).toEqual([...names].sort(byUtf8Bytes))
      expect(entries.every((e) => e.type === 'file')).toBe(true)
    })
  })

  kit.group('listing: symlinks', { caps: ['symlinks'], hooks: ['symlink'] }, () => {
    kit.test("a symlink has its target's type; a broken one or a loop is other", async (env) => {
      await env.write('s/file.txt', 'x')
      await env.write('s/dir/inner.txt', 'x')
      await env.symlink('s/to-file', 'file.txt')
      await env.symlink('s/to-dir', 'dir')
      await env.symlink('s/broken', 'nowhere')
      await env.symlink('s/loop', 'loop')
      const entries = await env.fs.listDir(await env.resolve('s'))
      expect(entries.map((e) => [e.name, e.type])).toEqual([
        ['broken', 'other'],
        ['dir', 'directory'],
        ['file.txt', 'file'],
        ['loop', 'other'],
        ['to-dir', 'directory'],
        ['to-file', 'file'],
      ])
      const broken = entries.find((e) => e.name === 'broken')
      expect(broken?.version).toBeUndefined()
      expect(broken?.size).toBeUndefined()
    })
  })
}

import { mkdirSync, mkdtempSync, readFileSync, realpathSync, rmSync, symlinkSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterEach, beforeEach, describe, expect, it } from 'vitest'
import { LocalFileSystem } from '@seamfs/backend-local'

let root: string
let fs: LocalFileSystem

beforeEach(() => {
  root = realpathSync(mkdtempSync(join(tmpdir(), 'seamfs-fast-')))
  fs = new LocalFileSystem({ cwd: root })
})

afterEach(async () => {
  await fs.close()
  rmSync(root, { recursive: true, force: true })
})

const BOM = Buffer.from([0xef, 0xbb, 0xbf])
const edit = async (name: string, oldString: string, newString: string, replaceAll = false) =>
  fs.editText(await fs.resolve(name), { oldString, newString, replaceAll })

describe('editText on the disk: bytes in, bytes out', () => {
  it('a large ASCII file: one match replaced, every other byte kept', async () => {
    const body = 'lorem ipsum dolor sit amet\n'.repeat(40_000)
    writeFileSync(join(root, 'big.txt'), `${body}@@MARK@@\n${body}`)
    const outcome = await edit('big.txt', '@@MARK@@', '@@DONE@@')
    expect(readFileSync(join(root, 'big.txt'), 'utf8')).toBe(`${body}@@DONE@@\n${body}`)
    expect(outcome.after).toBe(`${body}@@DONE@@\n${body}`)
    expect(outcome.before).toBe(`${body}@@MARK@@\n${body}`)
    expect(outcome.version).toBe((await fs.stat(await fs.resolve('big.txt')))?.version)
  })

  it('a non-ASCII file, a CRLF file and a file with a BOM keep their form', async () => {
    writeFileSync(join(root, 'u.txt'), 'é中🐂\nx 中\n')
    writeFileSync(join(root, 'crlf.txt'), 'a\r\nb\r\n')
    writeFileSync(join(root, 'bom.txt'), Buffer.concat([BOM, Buffer.from('k=1\n')]))
    expect((await edit('u.txt', '中', 'ж', true)).after).toBe('éж🐂\nx ж\n')
    expect(readFileSync(join(root, 'u.txt'), 'utf8')).toBe('éж🐂\nx ж\n')
    expect((await edit('crlf.txt', 'a\nb', 'a\nB\nC')).after).toBe('a\nB\nC\n')
    expect(readFileSync(join(root, 'crlf.txt'), 'latin1')).toBe('a\r\nB\r\nC\r\n')
    expect((await edit('bom.txt', 'k=1', 'k=2')).before).toBe('k=1\n')
    expect(readFileSync(join(root, 'bom.txt'))).toEqual(Buffer.concat([BOM, Buffer.from('k=2\n')]))
  })

  it("the outcome's before/after are plain properties, and stay this edit's when read after later edits", async () => {
    writeFileSync(join(root, 'f.txt'), 'one two\n')
    const first = await edit('f.txt', 'one', 'ONE')
    await edit('f.txt', 'two', 'TWO')
    expect(Object.keys(first)).toEqual(['version', 'before', 'after'])
    expect(JSON.parse(JSON.stringify(first))).toEqual({ version: first.version, before: 'one two\n', after: 'ONE two\n' })
    expect({ ...first }).toEqual({ version: first.version, before: 'one two\n', after: 'ONE two\n' })
    expect(readFileSync(join(root, 'f.txt'), 'utf8')).toBe('ONE TWO\n')
  })
})

describe('listDir on the disk', () => {
  it('orders names by code point: astral names after U+E000–U+FFFF', async () => {
    const names = ['\u{1F402}.txt', '\uFFFD.txt', 'a.txt', '\uE000.txt', 'Z.txt', 'é.txt']
    for (const name of names) writeFileSync(join(root, name), 'x')
    const listed = (await fs.listDir(await fs.resolve('.'))).map((e) => e.name)
    expect(listed).toEqual(['Z.txt', 'a.txt', 'é.txt', '\uE000.txt', '\uFFFD.txt', '\u{1F402}.txt'])
  })

  it('through a symlinked directory: display paths by the link, keys canonical, types in one pass', async () => {
    mkdirSync(join(root, 'real'))
    writeFileSync(join(root, 'real', 'f.txt'), 'x')
    mkdirSync(join(root, 'real', 'sub'))
    symlinkSync(join(root, 'real'), join(root, 'via'))
    const entries = await fs.listDir(await fs.resolve('via'))
    expect(entries.map((e) => [e.name, e.type, e.target.displayPath, e.target.targetKey])).toEqual([
      ['f.txt', 'file', join(root, 'via', 'f.txt'), (await fs.resolve('real/f.txt')).targetKey],
      ['sub', 'directory', join(root, 'via', 'sub'), (await fs.resolve('real/sub')).targetKey],
    ])
    const direct = await fs.listDir(await fs.resolve('real'))
    expect(direct.map((e) => e.target.displayPath)).toEqual(direct.map((e) => e.target.targetKey))
  })

  it('drops staging residue in the same pass, but keeps a file that merely has such a name', async () => {
    mkdirSync(join(root, '.seamfs-stage-1-abcdef'))
    writeFileSync(join(root, '.seamfs-stage-2-ghijkl'), 'data')
    writeFileSync(join(root, 'a.txt'), 'x')
    expect((await fs.listDir(await fs.resolve('.'))).map((e) => e.name)).toEqual(['.seamfs-stage-2-ghijkl', 'a.txt'])
  })
})

/**
 * Rules checked over their whole input space, not on a few hand-picked inputs: each property draws
 * its inputs from a grammar of what the contract accepts (path forms, names, stored bytes, guards),
 * seeded, and on failure names the smallest counterexample and a replay line. An author who got the
 * common forms right and another form wrong is caught where the hand-picked tests looked elsewhere.
 */
import { posix } from 'node:path'
import fc from 'fast-check'
import { expect } from 'vitest'
import { isFsError, type FileSystem, type FsVersion } from '@seamfs/core'
import { compareNames } from '@seamfs/core/backend'
import { codeOf, type Env, type Kit } from '../kit.js'
import { everyCase, holds, runDirs } from './seeded.js'
import { collect } from './stream.js'

/** What an operation gave: the value's comparable part, or the error code. */
async function outcome<T>(work: () => Promise<T>, shape: (value: T) => unknown): Promise<unknown> {
  try {
    return { ok: shape(await work()) }
  } catch (err) {
    if (isFsError(err)) return { code: err.code }
    throw err
  }
}

// ---------------------------------------------------------------- paths

/** The names a path of the path grammar walks through (laid out by {@link layPaths}), and the dot segments. */
const STEP = fc.constantFrom('d', 'e', 'f.txt', 'g.txt', 'missing', '.', '..', '')

/** A path of the grammar: steps joined by `/` (an empty step doubles the separator), maybe a trailing `/`. */
const pathText = fc
  .tuple(fc.array(STEP, { minLength: 1, maxLength: 6 }), fc.boolean())
  .map(([steps, trailing]) => steps.join('/') + (trailing ? '/' : ''))
  .filter((p) => p.trim() !== '')

/** Lays out `<dir>/d/f.txt`, `<dir>/d/e/g.txt` and `<dir>/e/` (a file, a nested file, a directory). */
async function layPaths(env: Env, dir: string): Promise<void> {
  await env.write(`${dir}/d/f.txt`, 'f')
  await env.write(`${dir}/d/e/g.txt`, 'g')
  await env.write(`${dir}/e/h.txt`, 'h')
}

/**
 * The cwd forms of the grammar, against a run's directory: none, relative, relative with dot segments
 * and doubled separators, absolute (the displayPath of the directory, as `resolve` gave it).
 */
function cwdForms(dir: string, absolute: string): (string | undefined)[] {
  return [undefined, dir, `${dir}/d`, `./${dir}//d/..`, `${dir}/d/e/`, posix.join(absolute, 'd'), `${absolute}/`]
}

/** The plain absolute path `path` names from `cwd`, lexically (what every alias of it must resolve like). */
function plainPath(home: string, cwd: string | undefined, path: string): string {
  return posix.resolve(home, cwd ?? '.', path)
}

// ---------------------------------------------------------------- names

/**
 * Units of a name: ASCII and its specials (`%`, `#`, `?`, `\`, `:`, `*`, quotes, spaces), composed and
 * decomposed accents (NFC `é` against NFD `e` + U+0301), case pairs, controls, bidi and zero-width
 * marks, a noncharacter, supplementary planes. Never `/` or NUL; `\n` only where names may hold one.
 */
// prettier-ignore
const NAME_UNITS: readonly string[] = [
  'a', 'A', 'b', 'B', 'z', '0', '-', '_', '.', ' ', '%', '%20', '#', '?', '\\', ':', '*', '"', "'", '~', '+', '&', '=', '[', ']', '{', '}',
  'é', 'e\u0301', 'É', 'ß', 'ẞ', 'İ', 'ı', 'ﬁ', '中', '日本', 'Ω', '\u2126',
  '\t', '\u0001', '\u001f', '\u007f', '\u0085', '\u00a0', '\u200b', '\u200d', '\u202e', '\u2028', '\ufeff', '\ufffe', '\uffff',
  '🐂', '😀', '𝒳', '\u{10fffd}',
]

/** The units of names, with the line breaks where names may hold one. */
function unitsOf(newline: boolean): readonly string[] {
  return newline ? [...NAME_UNITS, '\n', '\r'] : NAME_UNITS
}

function nameUnits(newline: boolean): fc.Arbitrary<string> {
  return fc.constantFrom(...unitsOf(newline))
}

const utf8Length = (text: string): number => Buffer.byteLength(text, 'utf8')

/** The deterministic pass of the names property: every unit, each in a name of its own (`u` + unit + `x`), four to a directory. */
function unitNameSets(newline: boolean): string[][] {
  const names = unitsOf(newline).map((unit) => `u${unit}x`)
  return Array.from({ length: Math.ceil(names.length / 4) }, (_, i) => names.slice(i * 4, i * 4 + 4))
}

function nameArb(newline: boolean): fc.Arbitrary<string> {
  return fc
    .array(nameUnits(newline), { minLength: 1, maxLength: 8 })
    .map((units) => units.join(''))
    .filter((name) => name !== '.' && name !== '..' && name.trim() !== '' && utf8Length(name) <= 120)
}

// ---------------------------------------------------------------- contents

/** The boundaries the contract names: the text sample (8 KiB) and the stream chunk (64 KiB). */
const BOUNDARIES = [0, 8192, 64 * 1024]

/** Byte sequences of every class: valid (ASCII, 2–4 byte, noncharacters, BOM, NUL, CR/LF) and invalid UTF-8. */
const PIECES: readonly (readonly [string, readonly number[]])[] = [
  ['ascii', [0x61]],
  ['lf', [0x0a]],
  ['crlf', [0x0d, 0x0a]],
  ['cr', [0x0d]],
  ['nul', [0x00]],
  ['bom', [0xef, 0xbb, 0xbf]],
  ['2-byte', [0xc3, 0xa9]],
  ['3-byte', [0xe4, 0xb8, 0xad]],
  ['noncharacter U+FFFF', [0xef, 0xbf, 0xbf]],
  ['4-byte', [0xf0, 0x9f, 0x90, 0x82]],
  ['U+10FFFF', [0xf4, 0x8f, 0xbf, 0xbf]],
  ['lone continuation', [0x80]],
  ['overlong', [0xc0, 0xaf]],
  ['encoded surrogate', [0xed, 0xa0, 0x80]],
  ['above U+10FFFF', [0xf4, 0x90, 0x80, 0x80]],
  ['truncated 3-byte', [0xe4, 0xb8]],
  ['0xFF', [0xff]],
]

interface Content {
  readonly bytes: Uint8Array
  readonly shown: string
}

/**
 * Contents: empty, or filler up to just before, at or after a named boundary, then a piece of some
 * class, then more filler and maybe another piece (so a class lands before, at and after every boundary).
 */
const contentArb: fc.Arbitrary<Content> = fc
  .tuple(
    fc.constantFrom(...BOUNDARIES),
    fc.integer({ min: -4, max: 4 }),
    fc.constantFrom(...PIECES),
    fc.integer({ min: 0, max: 6 }),
    fc.option(fc.constantFrom(...PIECES), { freq: 2 }),
    fc.boolean(),
  )
  .map(([boundary, offset, [name, piece], gap, second, empty]) => {
    if (empty && boundary === 0) return { bytes: new Uint8Array(0), shown: 'empty' }
    const head = Math.max(0, boundary + offset)
    const parts = [Buffer.alloc(head, 0x78), Buffer.from(piece), Buffer.alloc(gap, 0x79), Buffer.from(second?.[1] ?? [])]
    const bytes = new Uint8Array(Buffer.concat(parts))
    return { bytes, shown: `${head} × "x", ${name}, ${gap} × "y"${second === null ? '' : `, ${second[0]}`} (${bytes.length} bytes)` }
  })
  .map((c) => Object.assign(c, { [fc.toStringMethod]: () => c.shown }))

/**
 * Every class of piece at every named boundary: at the end of the file (filler up to just before,
 * at or just after the boundary) and followed by more filler; each offset and boundary taken in turn.
 */
function contentCases(): Content[] {
  const out: Content[] = [{ bytes: new Uint8Array(0), shown: 'empty' }]
  let i = 0
  for (const [name, piece] of PIECES) {
    for (const tail of [0, 3]) {
      const boundary = BOUNDARIES[i % BOUNDARIES.length] ?? 0
      const head = Math.max(0, boundary + ((i >> 1) % 3) - 1)
      i++
      const bytes = new Uint8Array(Buffer.concat([Buffer.alloc(head, 0x78), Buffer.from(piece), Buffer.alloc(tail, 0x79)]))
      out.push({ bytes, shown: `${head} × "x", ${name}, ${tail} × "y" (${bytes.length} bytes)` })
    }
  }
  return out
}

/** What `readText` must give for `bytes`: the text without a leading BOM, or `FS_NOT_TEXT` (a NUL in the first 8 KiB, invalid UTF-8 anywhere). */
function expectedText(bytes: Uint8Array): { readonly ok: string } | { readonly code: 'FS_NOT_TEXT' } {
  if (bytes.subarray(0, 8192).includes(0)) return { code: 'FS_NOT_TEXT' }
  try {
    return { ok: new TextDecoder('utf-8', { fatal: true }).decode(bytes) }
  } catch {
    return { code: 'FS_NOT_TEXT' }
  }
}

// ---------------------------------------------------------------- guards

/** Where a guard's version comes from, against the file it guards. */
const GUARD_SOURCES = ['current', 'stale', 'another file', 'a directory', 'malformed', 'empty'] as const
type GuardSource = (typeof GUARD_SOURCES)[number]

/** The writes of the guard property: each mutation that takes `expected.version`. */
const GUARDED_OPS = ['writeText', 'writeBytes', 'editText', 'remove', 'rename'] as const
type GuardedOp = (typeof GUARDED_OPS)[number]

async function versionFrom(env: Env, source: GuardSource, dir: string, stale: FsVersion | undefined): Promise<FsVersion | undefined> {
  const stat = async (path: string): Promise<FsVersion | undefined> => (await env.fs.stat(await env.resolve(path)))?.version
  switch (source) {
    case 'current':
      return stat(`${dir}/f.txt`)
    case 'stale':
      return stale
    case 'another file':
      return stat(`${dir}/other.txt`)
    case 'a directory':
      return stat(`${dir}/sub`)
    case 'malformed':
      return 'not-a-version-of-anything' as FsVersion
    case 'empty':
      return '' as FsVersion
  }
}

async function guarded(fs: FileSystem, env: Env, op: GuardedOp, dir: string, file: string, version: FsVersion): Promise<unknown> {
  const target = await env.resolve(`${dir}/${file}`)
  const expected = { version }
  switch (op) {
    case 'writeText':
      return fs.writeText(target, 'guarded write', { expected: { kind: 'replaceIfVersion', version } })
    case 'writeBytes':
      return fs.writeBytes(target, new TextEncoder().encode('guarded bytes'), { expected: { kind: 'replaceIfVersion', version } })
    case 'editText':
      return fs.editText(target, { oldString: 'two', newString: 'TWO', replaceAll: false }, { expected })
    case 'remove':
      return fs.remove(target, { expected })
    case 'rename':
      return fs.rename(target, await env.resolve(`${dir}/moved.txt`), { expected })
  }
}

/** Every file under `dir` with its text: what a failed guarded call must leave as it was. */
async function contents(env: Env, dir: string): Promise<Record<string, string>> {
  const out: Record<string, string> = {}
  for (const entry of await env.fs.listDir(await env.resolve(dir))) {
    if (entry.type === 'file') out[entry.name] = await env.fs.readText(entry.target)
    else if (entry.type === 'directory') out[`${entry.name}/`] = ''
  }
  return out
}

// ---------------------------------------------------------------- trees and links

/** One node of a drawn tree: a file, a directory, or (where links exist) a link whose text is relative to its directory. */
type TreeNode = { readonly path: string; readonly kind: 'file' | 'dir' } | { readonly path: string; readonly kind: 'link'; readonly text: string }

/** A drawn tree, consistent: nothing below a file or a link, no path twice. */
interface Tree {
  readonly nodes: readonly TreeNode[]
}

const TREE_NAMES = ['a', 'b', 'c.txt', 'd.txt']

/**
 * Trees of up to 8 nodes, 3 levels deep; where `links`, some nodes are links: to a file, to a directory,
 * to a missing path (dangling), to another link (a chain), through a parent (`..`), to themselves (a loop).
 */
function treeArb(links: boolean): fc.Arbitrary<Tree> {
  const path = fc.array(fc.constantFrom(...TREE_NAMES), { minLength: 1, maxLength: 3 }).map((parts) => parts.join('/'))
  const kind = links ? fc.constantFrom('file', 'file', 'dir', 'link', 'link') : fc.constantFrom('file', 'file', 'dir')
  return fc
    .array(fc.tuple(path, kind, path, fc.boolean(), fc.nat(63)), { minLength: 1, maxLength: 8 })
    .map((drawn) => {
      const nodes: TreeNode[] = []
      const taken = new Map<string, TreeNode['kind']>()
      for (const [p, k, to, missing, pick] of drawn) {
        const ancestors = p
          .split('/')
          .map((_, i, parts) => parts.slice(0, i).join('/'))
          .filter((a) => a !== '')
        if (taken.has(p) || ancestors.some((a) => taken.get(a) === 'file' || taken.get(a) === 'link')) continue
        if (k !== 'dir' && [...taken.keys()].some((q) => q.startsWith(`${p}/`))) continue
        for (const a of ancestors) if (!taken.has(a)) taken.set(a, 'dir')
        taken.set(p, k)
        if (k === 'link') {
          // Mostly a node already drawn (a file, a directory, another link: a chain), else any path, or a missing one.
          const drawnNode = pick % 4 === 0 ? undefined : nodes[pick % Math.max(1, nodes.length)]?.path
          const target = missing ? `${to}-missing` : (drawnNode ?? to)
          nodes.push({ path: p, kind: 'link', text: posix.relative(posix.dirname(p), target) || '.' })
        } else nodes.push({ path: p, kind: k })
      }
      return { nodes }
    })
    .filter((t) => t.nodes.length > 0)
    .map((t) =>
      Object.assign(t, {
        [fc.toStringMethod]: () => t.nodes.map((n) => (n.kind === 'link' ? `${n.path} -> ${n.text}` : `${n.path}${n.kind === 'dir' ? '/' : ''}`)).join(', '),
      }),
    )
}

/** What a listing must say of each path of a laid tree: its type after links, and whether it is a link. */
class TreeModel {
  readonly #kinds = new Map<string, TreeNode>()
  readonly dirs = new Set<string>([''])

  constructor(nodes: readonly TreeNode[], emptyDirs: boolean) {
    for (const node of nodes) this.#kinds.set(node.path, node)
    // A directory exists when something was made in it: a file, a link, or (where the kit can make
    // directories) a drawn directory; a directory drawn empty elsewhere is never made, nor are its parents.
    for (const node of nodes) {
      if (node.kind === 'dir' && !emptyDirs) continue
      const parts = node.path.split('/')
      for (let i = 1; i < parts.length; i++) this.dirs.add(parts.slice(0, i).join('/'))
      if (node.kind === 'dir') this.dirs.add(node.path)
    }
    // A directory drawn empty on a store without empty directories does not exist.
    for (const node of nodes) if (node.kind === 'dir' && !this.dirs.has(node.path)) this.#kinds.delete(node.path)
  }

  /** The type a path has after following links (`other`: dangling, a loop), undefined when absent. */
  typeOf(path: string): 'file' | 'directory' | 'other' | undefined {
    const real = this.#real(path, 0)
    const found = real === undefined ? undefined : this.dirs.has(real) ? 'directory' : this.#kinds.get(real)?.kind
    if (found === 'directory' || found === 'dir') return 'directory'
    if (found === 'file') return 'file'
    return this.isLink(path) ? 'other' : undefined
  }

  /**
   * The path with every link on it followed, as the kernel follows them: a link's text from the
   * link's own (real) directory, `..` from where the walk really is. Undefined for a loop, or a
   * walk that leaves the tree.
   */
  #real(path: string, hops: number): string | undefined {
    let at = ''
    for (const part of path.split('/')) {
      if (part === '' || part === '.') continue
      if (part === '..') {
        if (at === '') return undefined
        at = at.includes('/') ? at.slice(0, at.lastIndexOf('/')) : ''
        continue
      }
      const next = at === '' ? part : `${at}/${part}`
      const node = this.#kinds.get(next)
      if (node?.kind !== 'link') {
        at = next
        continue
      }
      if (hops >= 40) return undefined
      const followed = this.#real(at === '' ? node.text : `${at}/${node.text}`, hops + 1)
      if (followed === undefined) return undefined
      at = followed
    }
    return at
  }

  isLink(path: string): boolean {
    return this.#kinds.get(path)?.kind === 'link'
  }

  /** The names directly in `dir`. */
  children(dir: string): string[] {
    const prefix = dir === '' ? '' : `${dir}/`
    const names = new Set<string>()
    for (const path of [...this.#kinds.keys(), ...this.dirs]) {
      if (path === dir || !path.startsWith(prefix)) continue
      names.add(path.slice(prefix.length).split('/')[0] as string)
    }
    return [...names].sort(compareNames)
  }
}

async function layTree(env: Env, kit: Kit, root: string, tree: Tree): Promise<void> {
  for (const node of tree.nodes) {
    const at = `${root}/${node.path}`
    if (node.kind === 'file') await env.write(at, `file ${node.path}`)
    else if (node.kind === 'link') await env.symlink(at, node.text)
    else if (kit.caps.createDirectory !== undefined && kit.caps.readOnly !== true) await env.fs.createDirectory(await env.resolve(at))
  }
}

/** The generative clauses (see the file's TSDoc). */
export function generativeClauses(kit: Kit): void {
  const newline = kit.caps.newlineInNames
  // The random runs scale with generativeRuns (ten times as many with --thorough): so does the time they may take.
  // The pass over every class counts too (up to 60 cases): a store at tens of ms a request needs the time.
  const timeoutMs = Math.max(kit.tuning.timeoutMs, (kit.tuning.generativeRuns + 60) * 2_000)
  kit.group('generative', {}, () => {
    const pathsTitle =
      'resolve: every path form (dot segments at and above each base, doubled and trailing separators, each cwd form) resolves like its plain form'
    kit.test(
      pathsTitle,
      async (env) => {
        const home = (await env.resolve('.')).displayPath
        // One layout serves every run: resolving changes nothing.
        const dir = 'p'
        await layPaths(env, dir)
        const absolute = (await env.resolve(dir)).displayPath
        const forms = fc.record({ cwd: fc.constantFrom(...cwdForms(dir, absolute)), path: pathText })
        await holds(kit, pathsTitle, forms, async ({ cwd, path }) => {
          const plain = plainPath(home, cwd, path)
          const aliased = await outcome(
            () => env.fs.resolve(path, { cwd }),
            (t) => t.targetKey,
          )
          const direct = await outcome(
            () => env.fs.resolve(plain),
            (t) => t.targetKey,
          )
          expect(aliased, `resolve(${JSON.stringify(path)}, { cwd: ${JSON.stringify(cwd)} }) against its plain form ${JSON.stringify(plain)}`).toEqual(direct)
          if (!('ok' in (aliased as object))) return
          const target = await env.fs.resolve(path, { cwd })
          expect((await env.fs.resolve(target.displayPath)).targetKey, `resolve(displayPath ${JSON.stringify(target.displayPath)})`).toBe(target.targetKey)
          const info = await env.fs.stat(target)
          const plainInfo = await env.fs.stat(await env.fs.resolve(plain))
          expect(info?.type, 'stat of the alias and of the plain form').toBe(plainInfo?.type)
          const lstat = await outcome(
            () => env.fs.lstat(path, { cwd }),
            (i) => i?.type,
          )
          expect(lstat, `lstat(${JSON.stringify(path)}, { cwd: ${JSON.stringify(cwd)} })`).toEqual({ ok: info?.type })
          const root = await env.resolve(dir)
          const inside = plain === absolute || plain.startsWith(`${absolute.replace(/\/+$/, '')}/`)
          expect(env.fs.contains(root, target), `contains(${JSON.stringify(absolute)}, ${JSON.stringify(plain)})`).toBe(inside)
          const local = await outcome(
            async () => env.fs.processPath(target),
            (p) => typeof p,
          )
          expect(local, `processPath of ${JSON.stringify(plain)} where capabilities.processPath is ${String(kit.caps.processPath)}`).toEqual(
            kit.caps.processPath ? { ok: 'string' } : { code: 'FS_UNSUPPORTED' },
          )
        })
      },
      timeoutMs,
    )

    const namesTitle = `names: any name (specials, NFC and NFD, case pairs, controls, bidi, supplementary planes${newline ? ', newlines' : ''}) is stored, listed, resolved and read back exactly`
    kit.test(
      namesTitle,
      async (env) => {
        const dirs = runDirs('n')
        const names = fc.uniqueArray(nameArb(newline), { minLength: 1, maxLength: 4 })
        const check = async (set: readonly string[]): Promise<void> => {
          const dir = dirs()
          const written = new Map(set.map((name, i) => [name, `content ${i} of ${JSON.stringify(name)}`]))
          for (const [name, text] of written) await env.write(`${dir}/${name}`, text)
          const entries = await env.fs.listDir(await env.resolve(dir))
          expect(
            entries.map((e) => e.name),
            'listDir gives exactly the names written, in code point order',
          ).toEqual([...written.keys()].sort(compareNames))
          const urls = new Set<string>()
          for (const entry of entries) {
            const text = written.get(entry.name) ?? ''
            const byPath = await env.resolve(`${dir}/${entry.name}`)
            expect(entry.type, `type of ${JSON.stringify(entry.name)}`).toBe('file')
            expect(entry.target.targetKey, `the entry's target is what resolving its name gives (${JSON.stringify(entry.name)})`).toBe(byPath.targetKey)
            expect(await env.fs.readText(entry.target), `read through the entry (${JSON.stringify(entry.name)})`).toBe(text)
            expect(await env.fs.readText(byPath), `read through the name (${JSON.stringify(entry.name)})`).toBe(text)
            const info = await env.fs.stat(byPath)
            expect(info?.size, `stat size of ${JSON.stringify(entry.name)}`).toBe(utf8Length(text))
            if (entry.size !== undefined) expect(entry.size, `listed size of ${JSON.stringify(entry.name)}`).toBe(utf8Length(text))
            if (entry.version !== undefined) expect(entry.version, `listed version of ${JSON.stringify(entry.name)}`).toBe(info?.version)
            expect((await env.fs.resolve(byPath.displayPath)).targetKey, `resolve(displayPath) of ${JSON.stringify(entry.name)}`).toBe(byPath.targetKey)
            const url = env.fs.fileUrl(byPath)
            expect(() => new URL(url), `fileUrl of ${JSON.stringify(entry.name)} parses: ${url}`).not.toThrow()
            urls.add(url)
          }
          expect(urls.size, 'distinct names give distinct fileUrls').toBe(entries.length)
        }
        await everyCase(unitNameSets(newline), (set) => `the names ${JSON.stringify(set)}`, check)
        await holds(kit, namesTitle, names, check)
      },
      timeoutMs,
    )

    const bytesTitle =
      'contents: any bytes (empty, every class of invalid UTF-8, noncharacters, supplementary planes, BOM, NUL and CR at and around the sample and chunk boundaries) read back as stored'
    kit.test(
      bytesTitle,
      async (env) => {
        const dirs = runDirs('b')
        const check = async ({ bytes }: Content): Promise<void> => {
          const path = `${dirs()}/file.bin`
          if (kit.caps.readOnly === true) await env.writeBytes(path, bytes)
          else {
            // The caller's array changed as soon as the call is made: what is written is what it held then.
            const given = new Uint8Array(bytes)
            const writing = env.fs.writeBytes(await env.resolve(path), given)
            given.fill(0x2a)
            await writing
          }
          const target = await env.resolve(path)
          const info = await env.fs.stat(target)
          expect(info?.size, 'stat size').toBe(bytes.length)
          const read = await env.fs.readBytes(target)
          expect(Buffer.from(read).equals(Buffer.from(bytes)), 'readBytes gives the stored bytes (as they were when writeBytes was called)').toBe(true)
          expect([read.byteOffset, read.buffer.byteLength], 'readBytes answers an array of its own (byteOffset, buffer.byteLength)').toEqual([0, bytes.length])
          read.fill(0x2a)
          expect(Buffer.from(await env.fs.readBytes(target)).equals(Buffer.from(bytes)), 'changing what readBytes gave changes nothing stored').toBe(true)
          for (const maxBytes of [0, bytes.length - 1, bytes.length, bytes.length + 1].filter((m) => m >= 0)) {
            const code = await codeOf(env.fs.readBytes(target, { maxBytes }))
            expect(code, `readBytes with maxBytes ${maxBytes} of ${bytes.length} bytes`).toBe(bytes.length > maxBytes ? 'FS_TOO_LARGE' : 'ok')
          }
          const streamed = Buffer.concat(await collect(await env.fs.streamBytes(target)))
          expect(streamed.equals(Buffer.from(bytes)), 'streamBytes gives the stored bytes').toBe(true)
          // A chunk is the caller's until it asks for the next: writing into each one spoils neither the next chunks nor the file.
          const kept: Uint8Array[] = []
          for await (const chunk of await env.fs.streamBytes(target)) {
            kept.push(new Uint8Array(chunk))
            chunk.fill(0x2a)
          }
          expect(Buffer.concat(kept).equals(Buffer.from(bytes)), 'streamBytes when the caller writes into each chunk it holds').toBe(true)
          expect(Buffer.from(await env.fs.readBytes(target)).equals(Buffer.from(bytes)), 'the file after the caller wrote into its chunks').toBe(true)
          const opened = await env.fs.openFile(target)
          expect([opened.info.type, opened.info.size, opened.info.version], 'openFile: info is what stat says').toEqual(['file', bytes.length, info?.version])
          expect(Buffer.concat(await collect(opened.chunks)).equals(Buffer.from(bytes)), 'openFile: the chunks are the stored bytes').toBe(true)
          await opened.close()
          const text = expectedText(bytes)
          expect(
            await outcome(
              () => env.fs.readText(target),
              (t) => t,
            ),
          ).toEqual(text)
          const streamedText = await outcome(
            async () => (await collect(await env.fs.streamText(target))).join(''),
            (t) => t,
          )
          expect(streamedText, 'streamText').toEqual(text)
        }
        await everyCase(contentCases(), (c) => c.shown, check)
        await holds(kit, bytesTitle, contentArb, check)
      },
      timeoutMs,
    )

    const links = kit.unmet({ caps: ['symlinks'], hooks: ['symlink'] }) === undefined
    const treeTitle = `listings: every entry of a drawn tree${links ? ' (links to files, to directories, dangling, chained, through parents, looping)' : ''} agrees with stat, lstat, resolve and listTree`
    kit.test(
      treeTitle,
      async (env) => {
        const dirs = runDirs('t')
        const emptyDirs = kit.caps.createDirectory !== undefined && kit.caps.readOnly !== true
        await holds(kit, treeTitle, treeArb(links), async (tree) => {
          const root = dirs()
          // A file at the top, so that the tree's root exists whatever was drawn (an empty directory is not made everywhere).
          const nodes: TreeNode[] = [{ path: 'anchor.txt', kind: 'file' }, ...tree.nodes]
          await layTree(env, kit, root, { nodes })
          const model = new TreeModel(nodes, emptyDirs)
          const walked: string[] = []
          const visit = async (dir: string): Promise<void> => {
            const at = dir === '' ? root : `${root}/${dir}`
            const entries = await env.fs.listDir(await env.resolve(at))
            expect(
              entries.map((e) => e.name),
              `the names in ${JSON.stringify(dir || '.')}`,
            ).toEqual(model.children(dir))
            for (const entry of entries) {
              const rel = dir === '' ? entry.name : `${dir}/${entry.name}`
              const type = model.typeOf(rel)
              const link = model.isLink(rel)
              walked.push(`${rel} ${entry.type}${link && type === 'directory' ? ' link' : ''}`)
              expect(entry.type, `type of ${rel}`).toBe(type)
              // A link loop does not resolve (its entry is `other`); anything else resolves to the entry's target.
              const resolved = await outcome(
                () => env.resolve(`${root}/${rel}`),
                (t) => t.targetKey,
              )
              if (type !== 'other' || 'ok' in (resolved as object)) {
                expect(resolved, `the target of ${rel} is what resolving it gives`).toEqual({ ok: entry.target.targetKey })
              }
              const info = await env.fs.stat(entry.target)
              expect(info?.type, `stat of ${rel}`).toBe(type === 'other' ? undefined : type)
              if (entry.size !== undefined) expect(entry.size, `listed size of ${rel}`).toBe(info?.size)
              if (entry.version !== undefined) expect(entry.version, `listed version of ${rel}`).toBe(info?.version)
              expect((await env.fs.lstat(`${root}/${rel}`))?.type, `lstat of ${rel}`).toBe(link ? 'symlink' : type)
              if (type === 'directory' && !link) await visit(rel)
            }
          }
          await visit('')
          const listed: string[] = []
          for await (const page of await env.fs.listTree(await env.resolve(root))) {
            for (const e of page) listed.push(`${e.path} ${e.type}${e.link === true ? ' link' : ''}`)
          }
          expect(listed.sort(), 'listTree gives what listDir gives, directory by directory').toEqual(walked.sort())
          // Through the first link to a file: a write changes its target and keeps the link; a remove takes the target, not the link.
          const link = walked.map((w) => w.split(' ')[0] ?? '').find((rel) => model.isLink(rel) && model.typeOf(rel) === 'file')
          if (link === undefined || kit.caps.readOnly === true) return
          const through = await env.resolve(`${root}/${link}`)
          await env.fs.writeText(through, 'written through the link')
          expect(await env.fs.readText(through), `a write through the link ${link} changes its target`).toBe('written through the link')
          expect((await env.fs.lstat(`${root}/${link}`))?.type, `the link ${link} after a write through it`).toBe('symlink')
          if (kit.caps.remove !== true) return
          await env.fs.remove(through)
          expect(await env.fs.stat(through), `the target of ${link} after a remove through it`).toBeUndefined()
          expect((await env.fs.lstat(`${root}/${link}`))?.type, `the link ${link} after a remove through it`).toBe('symlink')
        })
      },
      timeoutMs,
    )

    const guardsTitle =
      'guards: a version from any source (current, stale, another file, a directory, malformed, empty) guards writes, edits, removes and moves exactly when it is the current one'
    kit.testIf(guardsTitle, { writes: true }, async (env) => {
      const dirs = runDirs('g')
      const ops = GUARDED_OPS.filter((op) => (op === 'remove' ? kit.caps.remove === true : op === 'rename' ? kit.caps.rename !== undefined : true))
      // A finite space: every operation, source and presence, each once.
      const all = ops.flatMap((op) => GUARD_SOURCES.flatMap((source) => [false, true].map((absent) => [op, source, absent] as const)))
      await everyCase(
        all,
        ([op, source, absent]) => `${op} guarded by ${source} on ${absent ? 'an absent' : 'a present'} file`,
        async ([op, source, absent]) => {
          const dir = dirs()
          await env.write(`${dir}/f.txt`, 'one two')
          const stale = (await env.fs.stat(await env.resolve(`${dir}/f.txt`)))?.version
          await env.write(`${dir}/f.txt`, 'one two three')
          await env.write(`${dir}/other.txt`, 'one two')
          await env.write(`${dir}/sub/inner.txt`, 'inner')
          const version = await versionFrom(env, source, dir, stale)
          if (version === undefined) return
          // An absent target: the version guards a file that is gone (removed behind the caller's back).
          const file = absent ? 'gone.txt' : 'f.txt'
          const before = await contents(env, dir)
          const code = await codeOf(guarded(env.fs, env, op, dir, file, version))
          const current = source === 'current' && !absent
          if (current) {
            expect(code, `${op} guarded by the current version`).toBe('ok')
            return
          }
          const allowed = absent && op === 'remove' ? ['FS_NOT_FOUND', 'FS_STALE_VERSION'] : ['FS_STALE_VERSION']
          expect(allowed, `${op} of ${absent ? 'an absent file' : 'a file'} guarded by ${source} version ${JSON.stringify(version)}: ${code}`).toContain(code)
          expect(await contents(env, dir), 'nothing changed').toEqual(before)
        },
      )
    })
  })
}

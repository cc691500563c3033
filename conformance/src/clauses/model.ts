import fc from 'fast-check'
import { expect } from 'vitest'
import { FsVersion, type FsErrorCode } from '@seamfs/core/backend'
import { codeOf, yieldToLoop, type Env, type Kit } from '../kit.js'
import { byUtf8Bytes } from './list.js'

const PATHS = ['a.txt', 'b.txt', 'd/c.txt', 'd/e/f.txt'] as const
type Path = (typeof PATHS)[number]
const DIRS = ['.', 'd', 'd/e'] as const
const NEVER = FsVersion('never-observed')
const BOM = '\uFEFF'
/** Edits skip a longer file: the model decides the dominant line ending on the whole file, core on its first 4096 characters. */
const MAX_EDITED_CHARS = 3000
/** The share of edits, and of guarded writes, that must succeed: byte-level damage is done by successful mutations only. */
const MIN_SUCCESS_SHARE = 0.3
/** Below this many attempts (a tiny `modelRuns`) the share is not asserted. */
const MIN_ATTEMPTS_FOR_SHARE = 50

/** The kinds of command, in the order the tallies are printed. */
const KINDS = ['edit', 'guarded write', 'write', 're-create after delete', 'read', 'stat', 'list', 'external write', 'external delete']

/** Attempts and successes of one kind of command, over the whole property run. */
type Tally = { attempts: number; ok: number }

/** What outlives one run: the tallies, and which external hooks the backend gave. */
interface World {
  readonly tallies: Map<string, Tally>
  readonly readBytes: boolean
}

/** The deliberately plain model: stored content by path, and what the test last observed of each. */
interface Model {
  /** Content exactly as stored: its UTF-8 encoding is the file's bytes (a BOM is a leading U+FEFF). */
  readonly files: Map<string, string>
  /** Version last observed per path, the content it had, and whether the store changed behind our back since. */
  readonly known: Map<string, { version: FsVersion; content: string; touched: boolean }>
  /** Directories that once held a file: a listing may still show them after their files are deleted. */
  readonly dirs: Set<string>
  readonly world: World
}

type Cmd = fc.AsyncCommand<Model, Env>

const show = (s: string): string => JSON.stringify(s).replaceAll(BOM, '\\ufeff')
const lf = (s: string): string => s.replaceAll('\r\n', '\n')
/** The text a read returns: the stored content without its BOM. */
const textOf = (stored: string): string => (stored.startsWith(BOM) ? stored.slice(BOM.length) : stored)
const isLowSurrogate = (s: string, i: number): boolean => i < s.length && s.charCodeAt(i) >= 0xdc00 && s.charCodeAt(i) <= 0xdfff

function countMatches(text: string, needle: string): number {
  let count = 0
  for (let i = text.indexOf(needle); i !== -1; i = text.indexOf(needle, i + needle.length)) count++
  return count
}

function tally(m: Model, kind: string): Tally {
  let t = m.world.tallies.get(kind)
  if (t === undefined) m.world.tallies.set(kind, (t = { attempts: 0, ok: 0 }))
  t.attempts++
  return t
}

function addParents(m: Model, path: string): void {
  for (let i = path.indexOf('/'); i !== -1; i = path.indexOf('/', i + 1)) m.dirs.add(path.slice(0, i))
}

/** The store changed `path` behind our back. */
function touch(m: Model, path: string, content: string | undefined): void {
  if (content === undefined) m.files.delete(path)
  else m.files.set(path, content)
  addParents(m, path)
  const known = m.known.get(path)
  if (known !== undefined) known.touched = true
}

/** The children of `dir` that `paths` (files, or directories when `leaf` says so) make. */
function childrenOf(paths: Iterable<string>, dir: string, leaf: 'file' | 'directory'): Map<string, 'file' | 'directory'> {
  const prefix = dir === '.' ? '' : `${dir}/`
  const children = new Map<string, 'file' | 'directory'>()
  for (const path of paths) {
    const [head, ...rest] = path.startsWith(prefix) ? path.slice(prefix.length).split('/') : []
    if (head !== undefined) children.set(head, rest.length === 0 ? leaf : 'directory')
  }
  return children
}

/**
 * The stored content after a literal edit, worked out unit by unit: a unit is a character, or a
 * line break stored as LF or CRLF. Matches are found on the units' characters; matched units are
 * dropped; inserted line breaks take the ending most breaks of the file have (LF on a tie); every
 * other unit, and the BOM, keeps its stored form.
 */
function editedContent(stored: string, oldLf: string, newLf: string, replaceAll: boolean): { matches: number; next?: string } {
  const bom = stored.startsWith(BOM) ? BOM : ''
  const text = stored.slice(bom.length)
  const units: string[] = []
  for (let i = 0; i < text.length; i++) {
    const pair = text[i] === '\r' && text[i + 1] === '\n'
    units.push(pair ? '\r\n' : text.charAt(i))
    if (pair) i++
  }
  const chars = units.map((u) => (u === '\r\n' ? '\n' : u)).join('')
  const starts: number[] = []
  for (let i = chars.indexOf(oldLf); i !== -1; i = chars.indexOf(oldLf, i + oldLf.length)) starts.push(i)
  if (starts.length === 0 || (starts.length > 1 && !replaceAll)) return { matches: starts.length }
  const crlfs = units.filter((u) => u === '\r\n').length
  const inserted = newLf.replaceAll('\n', crlfs > units.filter((u) => u === '\n').length ? '\r\n' : '\n')
  let next = bom
  let from = 0
  for (const start of starts) {
    next += units.slice(from, start).join('') + inserted
    from = start + oldLf.length
  }
  return { matches: starts.length, next: next + units.slice(from).join('') }
}

/** What a guard built from the model should meet: `ok`, `stale`, or `either` after an external same-content change. */
function guardState(m: Model, path: string): 'ok' | 'stale' | 'either' {
  const known = m.known.get(path)
  const content = m.files.get(path)
  if (known === undefined || content === undefined) return 'stale'
  if (!known.touched) return 'ok'
  return content === known.content ? 'either' : 'stale'
}

// vitest's expect costs tens of µs and a property run makes tens of thousands of checks: these call it on a mismatch only.
function same(actual: unknown, expected: unknown, what: string): void {
  if (!Object.is(actual, expected)) expect(actual, what).toBe(expected)
}

function within<T>(actual: T, allowed: readonly T[], what: string): void {
  if (!allowed.includes(actual)) expect(allowed, what).toContain(actual)
}

function differs(actual: unknown, other: unknown, what: string): void {
  if (Object.is(actual, other)) expect(actual, what).not.toBe(other)
}

/** `stat` agrees with the model; the version it returns becomes the one observed. */
async function observe(m: Model, env: Env, path: string): Promise<boolean> {
  const content = m.files.get(path)
  const info = await env.fs.stat(await env.resolve(path))
  if (content === undefined) {
    same(info, undefined, `stat(${path}) of a missing file`)
    return false
  }
  same(info?.type, 'file', `stat(${path}).type`)
  same(info?.size, new TextEncoder().encode(content).length, `stat(${path}).size`)
  const state = guardState(m, path)
  const known = m.known.get(path)
  if (known !== undefined && state === 'ok') same(info?.version, known.version, `stat(${path}).version while the content is unchanged`)
  if (known !== undefined && state === 'stale') differs(info?.version, known.version, `stat(${path}).version after the content changed`)
  if (info !== undefined) m.known.set(path, { version: info.version, content, touched: false })
  return true
}

/** The stored bytes are the model's, byte for byte (CRLFs, BOM, untouched bytes); without a readBytes hook, the read text is. */
async function expectStored(m: Model, env: Env, path: string, after = `writeText(${path})`): Promise<void> {
  const content = m.files.get(path) ?? ''
  if (!m.world.readBytes) {
    same(await env.read(path), textOf(content), `readText(${path}) after ${after}`)
    return
  }
  const stored = await env.readBytes(path)
  const expected = new TextEncoder().encode(content)
  if (stored.length === expected.length && stored.every((b, i) => b === expected[i])) return
  const found = new TextDecoder('utf-8', { ignoreBOM: true }).decode(stored)
  expect.fail(`after ${after}, the stored bytes are not the model's:\n  stored:   ${show(found)}\n  expected: ${show(content)}`)
}

/** A path fixed when generated, or one of the paths the model has (or lacks) when the command runs. */
class Where {
  constructor(
    readonly path: Path,
    readonly prefer: 'fixed' | 'existing' | 'missing',
    readonly index: number,
  ) {}
  in(m: Model): string {
    if (this.prefer === 'fixed') return this.path
    const pool = PATHS.filter((p) => m.files.has(p) === (this.prefer === 'existing'))
    return pool[this.index % pool.length] ?? this.path
  }
  shown(): string {
    return this.prefer === 'fixed' ? this.path : `${this.prefer}#${this.index} else ${this.path}`
  }
}

class WriteCmd implements Cmd {
  constructor(
    readonly where: Where,
    readonly text: string,
    readonly guard: 'none' | 'create' | 'replace',
    readonly fresh: boolean,
  ) {}
  check = (): true => true
  async run(m: Model, env: Env): Promise<void> {
    // fast-check runs commands back to back: a turn of the loop lets the kit's deadline fire.
    await yieldToLoop()
    const path = this.where.in(m)
    const t = tally(m, this.guard === 'none' ? 'write' : 'guarded write')
    if (this.guard === 'replace' && this.fresh) await observe(m, env, path)
    const existed = m.files.get(path)
    let allowed: (FsErrorCode | 'ok')[] = ['ok']
    if (this.guard === 'create' && existed !== undefined) allowed = ['FS_NOT_OBSERVED']
    if (this.guard === 'replace') {
      const state = guardState(m, path)
      allowed = state === 'ok' ? ['ok'] : state === 'stale' ? ['FS_STALE_VERSION'] : ['ok', 'FS_STALE_VERSION']
    }
    const expected =
      this.guard === 'none'
        ? undefined
        : this.guard === 'create'
          ? ({ kind: 'createIfAbsent' } as const)
          : ({ kind: 'replaceIfVersion', version: m.known.get(path)?.version ?? NEVER } as const)
    const target = await env.resolve(path)
    let outcome: Awaited<ReturnType<Env['fs']['writeText']>> | undefined
    within(await codeOf(async () => (outcome = await env.fs.writeText(target, this.text, { expected }))), allowed, `writeText(${path})`)
    if (outcome === undefined) return
    t.ok++
    same(outcome.operation, existed === undefined ? 'create' : 'update', 'the write outcome operation')
    // A leading U+FEFF is stored as given; whether `after` keeps it is left open here.
    within(outcome.after, [lf(this.text), lf(textOf(this.text))], 'the write outcome after')
    same(outcome.before, existed === undefined ? null : lf(textOf(existed)), 'the write outcome before')
    m.files.set(path, this.text)
    m.known.set(path, { version: outcome.version, content: this.text, touched: false })
    addParents(m, path)
    await expectStored(m, env, path)
  }
  toString = (): string => `write(${this.where.shown()}, ${show(this.text)}, ${this.guard}${this.fresh ? ', fresh' : ''})`
}

/** Where an edit's oldString comes from: a piece of the text as the model has it when the edit runs (so it matches). */
interface Piece {
  readonly at: number
  readonly length: number
  /** Grown until it occurs once (when not `replaceAll`). */
  readonly unique: boolean
}

class EditCmd implements Cmd {
  constructor(
    readonly where: Where,
    readonly piece: Piece | null,
    readonly literal: string,
    readonly newString: string,
    readonly replaceAll: boolean,
    readonly guard: 'none' | 'known' | 'fresh',
    /** Send the oldString with CRLF line breaks (matching is on LF-normalized text). */
    readonly crlf: boolean,
  ) {}
  check = (m: Model): boolean => (m.files.get(this.where.in(m))?.length ?? 0) <= MAX_EDITED_CHARS
  async run(m: Model, env: Env): Promise<void> {
    await yieldToLoop()
    const path = this.where.in(m)
    const t = tally(m, 'edit')
    if (this.guard === 'fresh') await observe(m, env, path)
    const current = m.files.get(path)
    const oldString = this.oldStringOf(current)
    const oldLf = lf(oldString)
    let allowed: (FsErrorCode | 'ok')[]
    let next: string | undefined
    if (oldLf === '') allowed = ['FS_EDIT_NOT_FOUND']
    else if (current === undefined) allowed = ['FS_STALE_VERSION']
    else {
      const state = this.guard === 'none' ? 'ok' : guardState(m, path)
      const edit = editedContent(current, oldLf, lf(this.newString), this.replaceAll)
      next = edit.next
      const matchCode: FsErrorCode | 'ok' = edit.matches === 0 ? 'FS_EDIT_NOT_FOUND' : next === undefined ? 'FS_AMBIGUOUS_EDIT' : 'ok'
      allowed = state === 'stale' ? ['FS_STALE_VERSION'] : state === 'either' ? [matchCode, 'FS_STALE_VERSION'] : [matchCode]
    }
    const expected = this.guard === 'none' ? undefined : { version: m.known.get(path)?.version ?? NEVER }
    const request = { oldString, newString: this.newString, replaceAll: this.replaceAll }
    const target = await env.resolve(path)
    let outcome: Awaited<ReturnType<Env['fs']['editText']>> | undefined
    const what = `editText(${path}, ${show(oldString)} → ${show(this.newString)}) on ${current === undefined ? 'a missing file' : show(current)}`
    within(await codeOf(async () => (outcome = await env.fs.editText(target, request, { expected }))), allowed, what)
    if (outcome === undefined || current === undefined || next === undefined) return
    t.ok++
    same(outcome.before, lf(textOf(current)), `the outcome before of ${what}`)
    same(outcome.after, lf(textOf(next)), `the outcome after of ${what}`)
    m.files.set(path, next)
    m.known.set(path, { version: outcome.version, content: next, touched: false })
    await expectStored(m, env, path, what)
  }
  /** A piece of the current text (never splitting a surrogate pair), else the literal. */
  oldStringOf(current: string | undefined): string {
    const text = lf(textOf(current ?? ''))
    if (this.piece === null || text === '') return this.literal
    let start = this.piece.at % text.length
    if (isLowSurrogate(text, start)) start--
    let end = Math.min(text.length, start + this.piece.length)
    if (isLowSurrogate(text, end)) end++
    if (this.piece.unique && !this.replaceAll) {
      while (end < text.length && countMatches(text, text.slice(start, end)) > 1) end += isLowSurrogate(text, end + 1) ? 2 : 1
      while (start > 0 && countMatches(text, text.slice(start, end)) > 1) start -= isLowSurrogate(text, start - 1) ? 2 : 1
    }
    const piece = text.slice(start, end)
    return this.crlf ? piece.replaceAll('\n', '\r\n') : piece
  }
  toString = (): string => {
    const from = this.piece === null ? show(this.literal) : `piece(${this.piece.at}, ${this.piece.length}${this.piece.unique ? ', unique' : ''})`
    const flags = `${this.replaceAll ? ', all' : ''}${this.guard === 'none' ? '' : `, ${this.guard} guard`}${this.crlf ? ', crlf' : ''}`
    return `edit(${this.where.shown()}, ${from} → ${show(this.newString)}${flags})`
  }
}

class ReadCmd implements Cmd {
  constructor(readonly path: Path) {}
  check = (): true => true
  async run(m: Model, env: Env): Promise<void> {
    await yieldToLoop()
    const t = tally(m, 'read')
    const content = m.files.get(this.path)
    if (content === undefined) same(await codeOf(env.read(this.path)), 'FS_NOT_FOUND', `readText(${this.path}) of a missing file`)
    else same(await env.read(this.path), textOf(content), `readText(${this.path})`)
    if (content !== undefined) t.ok++
  }
  toString = (): string => `read(${this.path})`
}

class StatCmd implements Cmd {
  constructor(readonly path: Path) {}
  check = (): true => true
  async run(m: Model, env: Env): Promise<void> {
    await yieldToLoop()
    const t = tally(m, 'stat')
    if (await observe(m, env, this.path)) t.ok++
  }
  toString = (): string => `stat(${this.path})`
}

class ListCmd implements Cmd {
  constructor(readonly dir: string) {}
  check = (): true => true
  async run(m: Model, env: Env): Promise<void> {
    await yieldToLoop()
    const t = tally(m, 'list')
    const required = childrenOf(m.files.keys(), this.dir, 'file')
    // Directories emptied by deletes may stay (local, SFTP) or vanish (S3).
    const optional = childrenOf(m.dirs, this.dir, 'directory')
    const target = await env.resolve(this.dir)
    let listed: Awaited<ReturnType<Env['fs']['listDir']>> | undefined
    const code = await codeOf(async () => (listed = await env.fs.listDir(target)))
    // A directory holding no file may be absent: never created, or emptied by deletes on a store without directories.
    within(code, this.dir === '.' || required.size > 0 ? ['ok'] : ['ok', 'FS_NOT_FOUND'], `listDir(${this.dir})`)
    if (listed === undefined) return
    t.ok++
    const entries = listed.map((e) => [e.name, e.type] as const)
    const names = entries.map(([name]) => name)
    for (const [name, type] of required) same(entries.find(([n]) => n === name)?.[1], type, `the type of ${name} in listDir(${this.dir})`)
    for (const [name, type] of entries) if (!required.has(name)) same(optional.get(name), type, `an unexpected entry ${name} (${type}) in listDir(${this.dir})`)
    if (new Set(names).size !== names.length) expect.fail(`listDir(${this.dir}) lists a name twice: ${show(names.join(', '))}`)
    if (names.some((name, i) => i > 0 && byUtf8Bytes(names[i - 1] ?? '', name) > 0)) expect(names).toEqual([...names].sort(byUtf8Bytes))
  }
  toString = (): string => `list(${this.dir})`
}

class ExternalWriteCmd implements Cmd {
  constructor(
    readonly path: Path,
    readonly text: string,
  ) {}
  check = (): true => true
  async run(m: Model, env: Env): Promise<void> {
    await yieldToLoop()
    tally(m, 'external write').ok++
    await env.writeBytes(this.path, this.text)
    touch(m, this.path, this.text)
  }
  toString = (): string => `externalWrite(${this.path}, ${show(this.text)})`
}

class DeleteCmd implements Cmd {
  constructor(readonly where: Where) {}
  check = (m: Model): boolean => m.files.size > 0
  async run(m: Model, env: Env): Promise<void> {
    await yieldToLoop()
    const path = this.where.in(m)
    tally(m, 'external delete').ok++
    await env.remove(path)
    touch(m, path, undefined)
  }
  toString = (): string => `externalDelete(${this.where.shown()})`
}

/** ABA: a file observed, deleted behind our back and re-created with other content; the old version guards nothing. */
class RecreateCmd implements Cmd {
  constructor(
    readonly where: Where,
    readonly text: string,
  ) {}
  check = (m: Model): boolean => m.files.size > 0
  async run(m: Model, env: Env): Promise<void> {
    await yieldToLoop()
    const path = this.where.in(m)
    const t = tally(m, 're-create after delete')
    await observe(m, env, path)
    const old = m.known.get(path)?.version ?? NEVER
    const previous = m.files.get(path)
    await env.remove(path)
    m.files.delete(path)
    const text = textOf(this.text) === '' || this.text === previous ? `${this.text}!` : this.text
    const target = await env.resolve(path)
    const outcome = await env.fs.writeText(target, text, { expected: { kind: 'createIfAbsent' } })
    same(outcome.operation, 'create', 'the outcome of a re-create')
    same(outcome.before, null, 'the before of a re-create')
    differs(outcome.version, old, 'the version of a re-created file with other content')
    m.files.set(path, text)
    m.known.set(path, { version: outcome.version, content: text, touched: false })
    await expectStored(m, env, path)
    const write = codeOf(env.fs.writeText(target, 'aba', { expected: { kind: 'replaceIfVersion', version: old } }))
    same(await write, 'FS_STALE_VERSION', 'a guarded write with a version from before the delete')
    const edit = codeOf(env.fs.editText(target, { oldString: lf(textOf(text)), newString: 'aba', replaceAll: false }, { expected: { version: old } }))
    same(await edit, 'FS_STALE_VERSION', 'a guarded edit with a version from before the delete')
    await expectStored(m, env, path)
    t.ok++
  }
  toString = (): string => `externalDelete+recreate(${this.where.shown()}, ${show(this.text)})`
}

/** A fresh store holding `initial`: written behind the filesystem's back where the backend allows it (unobserved), else through it. */
async function prepare(env: Env, world: World, initial: readonly (readonly [Path, string])[], external: boolean): Promise<{ model: Model; real: Env }> {
  const model: Model = { files: new Map(), known: new Map(), dirs: new Set(), world }
  for (const [path, content] of initial) {
    if (external) await env.writeBytes(path, content)
    else {
      const outcome = await env.fs.writeText(await env.resolve(path), content)
      model.known.set(path, { version: outcome.version, content, touched: false })
    }
    model.files.set(path, content)
    addParents(model, path)
  }
  return { model, real: env }
}

/** File text: lines with LF, CRLF or mixed breaks, a lone CR now and then, 4-byte characters, `$`, and a BOM when `bomWeight` says. */
function textArb(bomWeight: number): fc.Arbitrary<string> {
  const unit = fc.oneof({ weight: 20, arbitrary: fc.constantFrom('a', 'a', 'b', 'x', 'é', '中', '🐂', '$', ' ') }, { weight: 1, arbitrary: fc.constant('\r') })
  const line = fc.string({ unit, maxLength: 8 })
  return fc
    .record({
      lines: fc.array(fc.tuple(line, fc.boolean()), { maxLength: 6 }),
      style: fc.constantFrom('lf', 'crlf', 'mixed'),
      last: fc.string({ unit, maxLength: 4 }),
      bom: fc.oneof({ weight: 100 - bomWeight, arbitrary: fc.constant('') }, { weight: bomWeight, arbitrary: fc.constant(BOM) }),
    })
    .map(({ lines, style, last, bom }) => {
      const eol = (crlf: boolean): string => (style === 'lf' ? '\n' : style === 'crlf' || crlf ? '\r\n' : '\n')
      return bom + lines.map(([text, crlf]) => text + eol(crlf)).join('') + last
    })
}

/**
 * Command sequences: most short (each run pays for a fresh store), one in six long enough for a
 * file to be written, edited many times over, deleted and re-created in one run. Lengths are
 * uniform up to the maximum: the mean is about 7 commands.
 */
function sequences(command: fc.Arbitrary<Cmd>): fc.Arbitrary<Iterable<Cmd>> {
  return fc.oneof(
    { weight: 5, arbitrary: fc.commands([command], { maxCommands: 8, size: 'max' }) },
    { weight: 1, arbitrary: fc.commands([command], { maxCommands: 40, size: 'max' }) },
  )
}

export function modelClauses(kit: Kit, external: boolean): void {
  const seed = Number(process.env['SEAMFS_MODEL_SEED'] ?? kit.tuning.modelSeed)
  const replayPath = process.env['SEAMFS_MODEL_PATH']
  const runs = kit.tuning.modelRuns
  const canRemove = kit.unmet({ hooks: ['remove'] }) === undefined
  const world: World = { tallies: new Map(), readBytes: kit.unmet({ hooks: ['readBytes'] }) === undefined }
  const path = fc.constantFrom(...PATHS)
  const where = (...prefer: ('fixed' | 'existing' | 'missing')[]): fc.Arbitrary<Where> =>
    fc.tuple(path, fc.constantFrom(...prefer), fc.nat(7)).map(([p, pick, i]) => new Where(p, pick, i))
  const text = textArb(10)
  const needle = fc.string({ unit: fc.constantFrom('a', 'b', '\n', '\r\n', 'é', 'q'), maxLength: 3 })
  const newString = fc
    .array(fc.constantFrom('', 'a', 'Z', 'ü', '🐂', '\n', '\r\n', '$', '$&', '$$', "$'", '$`', '$1', '$<x>'), { maxLength: 4 })
    .map((t) => t.join(''))
  const piece = fc.record({
    at: fc.nat(999),
    length: fc.integer({ min: 1, max: 12 }),
    unique: fc.oneof({ weight: 6, arbitrary: fc.constant(true) }, fc.constant(false)),
  })
  const weighted = <T>(...choices: [number, T][]): fc.Arbitrary<T> => fc.oneof(...choices.map(([weight, v]) => ({ weight, arbitrary: fc.constant(v) })))
  const commands: fc.WeightedArbitrary<Cmd>[] = [
    { weight: 2, arbitrary: fc.tuple(where('fixed'), text).map(([w, t]) => new WriteCmd(w, t, 'none', false)) },
    { weight: 3, arbitrary: fc.tuple(where('missing', 'missing', 'fixed'), text).map(([w, t]) => new WriteCmd(w, t, 'create', false)) },
    {
      weight: 5,
      arbitrary: fc.tuple(where('existing', 'existing', 'fixed'), text, weighted([2, true], [1, false])).map(([w, t, f]) => new WriteCmd(w, t, 'replace', f)),
    },
    {
      weight: 12,
      arbitrary: fc
        .tuple(
          where('existing', 'existing', 'existing', 'fixed'),
          fc.option(piece, { freq: 6 }),
          needle,
          newString,
          weighted([2, false], [1, true]),
          weighted([4, 'none' as const], [2, 'known' as const], [3, 'fresh' as const]),
          weighted([3, false], [1, true]),
        )
        .map(([w, p, l, n, all, guard, crlf]) => new EditCmd(w, p, l, n, all, guard, crlf)),
    },
    { weight: 2, arbitrary: path.map((p) => new ReadCmd(p)) },
    { weight: 2, arbitrary: path.map((p) => new StatCmd(p)) },
    { weight: 2, arbitrary: fc.constantFrom(...DIRS).map((d) => new ListCmd(d)) },
    ...(external ? [{ weight: 3, arbitrary: fc.tuple(path, textArb(30)).map(([p, t]) => new ExternalWriteCmd(p, t)) }] : []),
    ...(canRemove
      ? [
          { weight: 1, arbitrary: where('existing').map((w) => new DeleteCmd(w)) },
          { weight: 1, arbitrary: fc.tuple(where('existing'), text).map(([w, t]) => new RecreateCmd(w, t)) },
        ]
      : []),
  ]
  // Each run starts with a few files, so that edits from its first command on can succeed.
  const initialFiles = fc
    .uniqueArray(fc.tuple(path, textArb(30)), { maxLength: PATHS.length, selector: ([p]) => p })
    .map((files) => Object.assign([...files], { [fc.toStringMethod]: () => `files(${files.map(([p, c]) => `${p}: ${show(c)}`).join(', ')})` }))
  const hooks = [external ? 'external writes' : '', canRemove ? 'deletes' : ''].filter((h) => h !== '')
  const title = `random command sequences agree with a plain model (seed ${seed}, ${runs} runs${hooks.length > 0 ? `, with ${hooks.join(' and ')}` : ''})`
  kit.group('model-based', {}, () => {
    kit.test(
      title,
      async () => {
        world.tallies.clear()
        const property = fc.asyncProperty(initialFiles, sequences(fc.oneof(...commands)), (initial, cmds) =>
          kit.withEnv((env) => fc.asyncModelRun(() => prepare(env, world, initial, external), cmds)),
        )
        const details = await fc.check(property, {
          numRuns: runs,
          seed,
          ...(replayPath === undefined ? {} : { path: replayPath }),
          endOnFailure: true,
        })
        const counts = [...world.tallies]
          .sort(([a], [b]) => KINDS.indexOf(a) - KINDS.indexOf(b))
          .map(([kind, t]) => `${kind} ${t.ok}/${t.attempts} ok`)
          .join(', ')
        console.log(`model: seed ${seed}, runs ${details.numRuns} — ${counts}`)
        if (details.failed) {
          const replay = `SEAMFS_MODEL_SEED=${details.seed} SEAMFS_MODEL_PATH=${String(details.counterexamplePath)}`
          throw new Error(
            `model-based test failed after ${details.numRuns} runs.\n` +
              `Counterexample: ${fc.stringify(details.counterexample)}\n` +
              `Error: ${details.errorInstance instanceof Error ? details.errorInstance.message : String(details.errorInstance)}\n` +
              `Replay: ${replay} npx vitest run -t "model-based"`,
            { cause: details.errorInstance },
          )
        }
        if (replayPath !== undefined) return
        for (const kind of ['edit', 'guarded write']) {
          const { attempts, ok } = world.tallies.get(kind) ?? { attempts: 0, ok: 0 }
          const what = `the share of ${kind}s that succeed (${ok}/${attempts}): the generators must reach success`
          if (attempts >= MIN_ATTEMPTS_FOR_SHARE) expect(ok / attempts, what).toBeGreaterThanOrEqual(MIN_SUCCESS_SHARE)
        }
      },
      Math.max(kit.tuning.timeoutMs, runs * 2_000),
    )
  })
}

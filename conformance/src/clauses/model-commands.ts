import { expect } from 'vitest'
import type { FsErrorCode } from '@seamfs/core/backend'
import { codeOf, yieldToLoop, type Env } from '../kit.js'
import { byUtf8Bytes } from './list.js'
import {
  absentCodes,
  addParents,
  Bin,
  bytesOf,
  changed,
  dirState,
  differs,
  editedContent,
  expectStored,
  guardState,
  lf,
  NEVER,
  observe,
  PATHS,
  same,
  show,
  tally,
  textOf,
  touch,
  within,
  writeCodes,
  writeGuard,
  type Cmd,
  shown,
  type Model,
  type Path,
  type Where,
} from './model-state.js'

// The commands of the model-based test: each runs one operation on the store and on the model, and compares.

/** Edits skip a longer file: finding a unique piece costs the model time quadratic in the text. */
const MAX_EDITED_CHARS = 6000

const isLowSurrogate = (s: string, i: number): boolean => i < s.length && s.charCodeAt(i) >= 0xdc00 && s.charCodeAt(i) <= 0xdfff

function countMatches(text: string, needle: string): number {
  let count = 0
  for (let i = text.indexOf(needle); i !== -1; i = text.indexOf(needle, i + needle.length)) count++
  return count
}

/** The children of `dir` that `paths` (files, or directories when `leaf` says so) make, added to `children`. */
function childrenOf(
  paths: Iterable<string>,
  dir: string,
  leaf: 'file' | 'directory',
  children = new Map<string, 'file' | 'directory'>(),
): Map<string, 'file' | 'directory'> {
  const prefix = dir === '.' ? '' : `${dir}/`
  for (const path of paths) {
    const [head, ...rest] = path.startsWith(prefix) ? path.slice(prefix.length).split('/') : []
    if (head !== undefined) children.set(head, rest.length === 0 ? leaf : 'directory')
  }
  return children
}

export class WriteCmd implements Cmd {
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
    const allowed: (FsErrorCode | 'ok')[] = writeCodes(m, path, this.guard)
    const expected = writeGuard(m, path, this.guard)
    const target = await env.resolve(path)
    let outcome: Awaited<ReturnType<Env['fs']['writeText']>> | undefined
    within(await codeOf(async () => (outcome = await env.fs.writeText(target, this.text, { expected }))), allowed, `writeText(${path})`)
    if (outcome === undefined) return
    t.ok++
    same(outcome.operation, existed === undefined ? 'create' : 'update', 'the write outcome operation')
    // A leading U+FEFF is stored as given; whether `after` keeps it is left open here.
    within(outcome.after, [lf(this.text), lf(textOf(this.text))], 'the write outcome after')
    same(outcome.before, existed === undefined || existed instanceof Bin ? null : lf(textOf(existed)), 'the write outcome before')
    m.files.set(path, this.text)
    m.known.set(path, { version: outcome.version, content: this.text, touched: false })
    addParents(m, path)
    changed(m, path)
    await expectStored(m, env, path)
  }
  toString = (): string => `write(${this.where.shown()}, ${show(this.text)}, ${this.guard}${this.fresh ? ', fresh' : ''})`
}

/** Where an edit's oldString comes from: a piece of the text as the model has it when the edit runs (so it matches). */
export interface Piece {
  readonly at: number
  readonly length: number
  /** Grown until it occurs once (when not `replaceAll`). */
  readonly unique: boolean
}

/** One request of an edit: its oldString a piece of the text it meets (else the literal), sent with CRLF breaks when `crlf`. */
export class EditPart {
  constructor(
    readonly piece: Piece | null,
    readonly literal: string,
    readonly newString: string,
    readonly replaceAll: boolean,
    /** Send the oldString with CRLF line breaks (matching is on LF-normalized text). */
    readonly crlf: boolean,
  ) {}
  /** A piece of `stored`'s text (never splitting a surrogate pair), else the literal. */
  oldStringOf(stored: string | undefined): string {
    const text = lf(textOf(stored ?? ''))
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
    return `${from} → ${show(this.newString)}${this.replaceAll ? ', all' : ''}${this.crlf ? ', crlf' : ''}`
  }
}

/** One request, or a list of them applied in order (each to the text the previous one left), all or nothing. */
export class EditCmd implements Cmd {
  constructor(
    readonly where: Where,
    readonly parts: readonly EditPart[],
    /** Send a list even of one request. */
    readonly asList: boolean,
    readonly guard: 'none' | 'known' | 'fresh',
  ) {}
  check = (m: Model): boolean => {
    const content = m.files.get(this.where.in(m))
    return typeof content !== 'string' || content.length <= MAX_EDITED_CHARS
  }
  async run(m: Model, env: Env): Promise<void> {
    await yieldToLoop()
    const path = this.where.in(m)
    const t = tally(m, this.parts.length > 1 ? 'multi-edit' : 'edit')
    if (this.guard === 'fresh') await observe(m, env, path)
    const current = m.files.get(path)
    // The model applies the requests in order; the first that fails decides the code.
    const text = typeof current === 'string' ? current : undefined
    let next: string | undefined = text
    let failure: FsErrorCode | undefined
    const requests = this.parts.map((part, n) => {
      const oldString = part.oldStringOf(next)
      if (lf(oldString) === '') failure ??= 'FS_EDIT_NOT_FOUND'
      else if (failure === undefined && next !== undefined) {
        const edit = editedContent(next, lf(oldString), lf(part.newString), part.replaceAll)
        if (edit.next === undefined) failure = edit.matches === 0 ? 'FS_EDIT_NOT_FOUND' : 'FS_AMBIGUOUS_EDIT'
        else next = edit.next
      }
      if (n === this.parts.length - 1 && failure !== undefined) next = undefined
      return { oldString, newString: part.newString, replaceAll: part.replaceAll }
    })
    const state = this.guard === 'none' ? 'ok' : guardState(m, path)
    let allowed: (FsErrorCode | 'ok')[]
    // An empty oldString is a malformed request: refused before any I/O, whatever the file.
    if (requests.some((r) => lf(r.oldString) === '')) allowed = ['FS_EDIT_NOT_FOUND']
    else if (current === undefined) allowed = absentCodes(m, path, 'FS_STALE_VERSION')
    else if (state === 'stale') allowed = ['FS_STALE_VERSION']
    else allowed = [current instanceof Bin ? 'FS_NOT_TEXT' : (failure ?? 'ok')]
    // A guard after an external same-content change may or may not hold; a directory's version is never the one observed.
    if (state === 'either' || (current === undefined && this.guard !== 'none')) allowed.push('FS_STALE_VERSION')
    const expected = this.guard === 'none' ? undefined : { version: m.known.get(path)?.version ?? NEVER }
    const request = this.asList || requests.length > 1 ? requests : requests[0]!
    const target = await env.resolve(path)
    let outcome: Awaited<ReturnType<Env['fs']['editText']>> | undefined
    const asked = requests.map((r) => `${show(r.oldString)} → ${show(r.newString)}`).join(', then ')
    const what = `editText(${path}, ${asked}) on ${current === undefined ? 'a missing file' : shown(current)}`
    within(await codeOf(async () => (outcome = await env.fs.editText(target, request, { expected }))), allowed, what)
    if (outcome === undefined || text === undefined || next === undefined) return
    t.ok++
    same(outcome.before, lf(textOf(text)), `the outcome before of ${what}`)
    same(outcome.after, lf(textOf(next)), `the outcome after of ${what}`)
    m.files.set(path, next)
    m.known.set(path, { version: outcome.version, content: next, touched: false })
    changed(m, path)
    await expectStored(m, env, path, what)
  }
  toString = (): string => {
    const flags = `${this.asList ? ', as a list' : ''}${this.guard === 'none' ? '' : `, ${this.guard} guard`}`
    return `edit(${this.where.shown()}, ${this.parts.map(String).join(' ; ')}${flags})`
  }
}

export class ReadCmd implements Cmd {
  constructor(readonly path: Path) {}
  check = (): true => true
  async run(m: Model, env: Env): Promise<void> {
    await yieldToLoop()
    const t = tally(m, 'read')
    const content = m.files.get(this.path)
    if (content === undefined) within(await codeOf(env.read(this.path)), absentCodes(m, this.path, 'FS_NOT_FOUND'), `readText(${this.path}) of no file`)
    else if (content instanceof Bin) same(await codeOf(env.read(this.path)), 'FS_NOT_TEXT', `readText(${this.path}) of ${shown(content)}`)
    else same(await env.read(this.path), textOf(content), `readText(${this.path})`)
    if (typeof content === 'string') t.ok++
  }
  toString = (): string => `read(${this.path})`
}

export class StatCmd implements Cmd {
  constructor(readonly path: string) {}
  check = (): true => true
  async run(m: Model, env: Env): Promise<void> {
    await yieldToLoop()
    const t = tally(m, 'stat')
    if (await observe(m, env, this.path)) t.ok++
  }
  toString = (): string => `stat(${this.path})`
}

export class ListCmd implements Cmd {
  constructor(readonly dir: string) {}
  check = (): true => true
  async run(m: Model, env: Env): Promise<void> {
    await yieldToLoop()
    const t = tally(m, 'list')
    const required = childrenOf(m.made, this.dir, 'directory', childrenOf(m.files.keys(), this.dir, 'file'))
    // Directories emptied by deletes may stay (local, SFTP) or vanish (S3).
    const optional = childrenOf(m.dirs, this.dir, 'directory')
    const target = await env.resolve(this.dir)
    let listed: Awaited<ReturnType<Env['fs']['listDir']>> | undefined
    const code = await codeOf(async () => (listed = await env.fs.listDir(target)))
    const state = dirState(m, this.dir)
    const allowed = m.files.has(this.dir) ? ['FS_NOT_DIRECTORY'] : state === 'yes' ? ['ok'] : state === 'maybe' ? ['ok', 'FS_NOT_FOUND'] : ['FS_NOT_FOUND']
    within(code, allowed, `listDir(${this.dir})`)
    if (listed === undefined) return
    t.ok++
    const prefix = this.dir === '.' ? '' : `${this.dir}/`
    // What an entry says of a file beyond its type is what the model has: its size, its version while unchanged.
    for (const entry of listed) {
      const content = m.files.get(prefix + entry.name)
      if (content === undefined || entry.type !== 'file') continue
      if (entry.size !== undefined) same(entry.size, bytesOf(content).length, `the size of ${entry.name} in listDir(${this.dir})`)
      const known = m.known.get(prefix + entry.name)
      if (entry.version !== undefined && known !== undefined && guardState(m, prefix + entry.name) === 'ok') {
        same(entry.version, known.version, `the version of ${entry.name} in listDir(${this.dir}) while the file is unchanged`)
      }
    }
    const entries = listed.map((e) => [e.name, e.type] as const)
    const names = entries.map(([name]) => name)
    for (const [name, type] of required) same(entries.find(([n]) => n === name)?.[1], type, `the type of ${name} in listDir(${this.dir})`)
    for (const [name, type] of entries) if (!required.has(name)) same(optional.get(name), type, `an unexpected entry ${name} (${type}) in listDir(${this.dir})`)
    if (new Set(names).size !== names.length) expect.fail(`listDir(${this.dir}) lists a name twice: ${show(names.join(', '))}`)
    if (names.some((name, i) => i > 0 && byUtf8Bytes(names[i - 1] ?? '', name) > 0)) expect(names).toEqual([...names].sort(byUtf8Bytes))
  }
  toString = (): string => `list(${this.dir})`
}

export class ExternalWriteCmd implements Cmd {
  constructor(
    readonly path: Path,
    readonly text: string,
  ) {}
  check = (m: Model): boolean => dirState(m, this.path) === 'no'
  async run(m: Model, env: Env): Promise<void> {
    await yieldToLoop()
    tally(m, 'external write').ok++
    await env.writeBytes(this.path, this.text)
    touch(m, this.path, this.text)
  }
  toString = (): string => `externalWrite(${this.path}, ${show(this.text)})`
}

export class DeleteCmd implements Cmd {
  constructor(readonly where: Where) {}
  check = (m: Model): boolean => PATHS.some((p) => m.files.has(p))
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
export class RecreateCmd implements Cmd {
  constructor(
    readonly where: Where,
    readonly text: string,
  ) {}
  check = (m: Model): boolean => PATHS.some((p) => m.files.has(p))
  async run(m: Model, env: Env): Promise<void> {
    await yieldToLoop()
    const path = this.where.in(m)
    const t = tally(m, 're-create after delete')
    await observe(m, env, path)
    const old = m.known.get(path)?.version ?? NEVER
    const previous = m.files.get(path)
    await env.remove(path)
    m.files.delete(path)
    m.mtimes.delete(path)
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

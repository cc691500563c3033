import { expect } from 'vitest'
import type { FsErrorCode } from '@seamfs/core/backend'
import { codeOf, yieldToLoop, type Env } from '../kit.js'
import { byUtf8Bytes } from './list.js'
import {
  addParents,
  differs,
  editedContent,
  expectStored,
  guardState,
  lf,
  NEVER,
  observe,
  same,
  show,
  tally,
  textOf,
  touch,
  within,
  type Cmd,
  type Model,
  type Path,
  type Where,
} from './model-state.js'

// The commands of the model-based test: each runs one operation on the store and on the model, and compares.

/** Edits skip a longer file: the model decides the dominant line ending on the whole file, core on its first 4096 characters. */
const MAX_EDITED_CHARS = 3000

const isLowSurrogate = (s: string, i: number): boolean => i < s.length && s.charCodeAt(i) >= 0xdc00 && s.charCodeAt(i) <= 0xdfff

function countMatches(text: string, needle: string): number {
  let count = 0
  for (let i = text.indexOf(needle); i !== -1; i = text.indexOf(needle, i + needle.length)) count++
  return count
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
export interface Piece {
  readonly at: number
  readonly length: number
  /** Grown until it occurs once (when not `replaceAll`). */
  readonly unique: boolean
}

export class EditCmd implements Cmd {
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

export class ReadCmd implements Cmd {
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

export class StatCmd implements Cmd {
  constructor(readonly path: Path) {}
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

export class ExternalWriteCmd implements Cmd {
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

export class DeleteCmd implements Cmd {
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
export class RecreateCmd implements Cmd {
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

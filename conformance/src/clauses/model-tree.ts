import type { FsErrorCode } from '@seamfs/core/backend'
import { codeOf, yieldToLoop, type Env } from '../kit.js'
import {
  absentCodes,
  addParents,
  Bin,
  bytesOf,
  changed,
  dirState,
  dropBelow,
  expectStored,
  guardState,
  NEVER,
  observe,
  same,
  shown,
  tally,
  textOf,
  within,
  writeCodes,
  writeGuard,
  type Cmd,
  type Content,
  type Model,
  type Where,
} from './model-state.js'
import { collect } from './stream.js'

// The commands of the model-based test that change the tree or work on bytes: writeBytes and
// readBytes, remove, rename (files and directories), createDirectory. Each runs the operation on
// the store and on the model, and compares.

/** Runs `operation`, checks its code is one of `allowed`, and gives its outcome when it succeeded. */
async function attempt<T>(operation: () => Promise<T>, allowed: readonly (FsErrorCode | 'ok')[], what: string): Promise<T | undefined> {
  let outcome: T | undefined
  within(await codeOf(async () => (outcome = await operation())), allowed, what)
  return outcome
}

const under = (path: string, dir: string): boolean => path === dir || path.startsWith(`${dir}/`)

export class BytesWriteCmd implements Cmd {
  constructor(
    readonly where: Where,
    readonly content: Content,
    readonly guard: 'none' | 'create' | 'replace',
  ) {}
  check = (): true => true
  async run(m: Model, env: Env): Promise<void> {
    await yieldToLoop()
    const path = this.where.in(m)
    const t = tally(m, 'write bytes')
    const existed = m.files.get(path)
    const expected = writeGuard(m, path, this.guard)
    const target = await env.resolve(path)
    const what = `writeBytes(${path}, ${shown(this.content)}, ${this.guard})`
    const outcome = await attempt(() => env.fs.writeBytes(target, bytesOf(this.content), { expected }), writeCodes(m, path, this.guard), what)
    if (outcome === undefined) return
    t.ok++
    same(outcome.operation, existed === undefined ? 'create' : 'update', `the operation of ${what}`)
    m.files.set(path, this.content)
    m.known.set(path, { version: outcome.version, content: this.content, touched: false })
    addParents(m, path)
    changed(m, path)
    await expectStored(m, env, path, what)
  }
  toString = (): string => `writeBytes(${this.where.shown()}, ${shown(this.content)}, ${this.guard})`
}

export class BytesReadCmd implements Cmd {
  constructor(readonly path: string) {}
  check = (): true => true
  async run(m: Model, env: Env): Promise<void> {
    await yieldToLoop()
    const t = tally(m, 'read bytes')
    const content = m.files.get(this.path)
    const target = await env.resolve(this.path)
    const bytes = await attempt(
      () => env.fs.readBytes(target),
      content === undefined ? absentCodes(m, this.path, 'FS_NOT_FOUND') : ['ok'],
      `readBytes(${this.path})`,
    )
    if (bytes === undefined || content === undefined) return
    t.ok++
    const expected = bytesOf(content)
    if (bytes.length !== expected.length || bytes.some((b, i) => b !== expected[i]))
      same(Buffer.from(bytes).toString('hex'), Buffer.from(expected).toString('hex'), `readBytes(${this.path})`)
  }
  toString = (): string => `readBytes(${this.path})`
}

/** What is at or below `dir`: how many files, directories that must be there, and directories that may (emptied). */
function below(m: Model, dir: string): { files: number; dirs: number; maybe: number } {
  const required = new Set<string>()
  const need = (path: string): void => {
    for (let i = path.indexOf('/', dir.length + 1); i !== -1; i = path.indexOf('/', i + 1)) required.add(path.slice(0, i))
  }
  let files = 0
  for (const path of m.files.keys()) {
    if (!path.startsWith(`${dir}/`)) continue
    files++
    need(path)
  }
  for (const path of m.made) {
    if (!path.startsWith(`${dir}/`)) continue
    required.add(path)
    need(path)
  }
  const maybe = [...m.dirs].filter((p) => p.startsWith(`${dir}/`) && !required.has(p)).length
  return { files, dirs: required.size, maybe }
}

/** `remove` of a file or a directory, guarded or not, recursive or not. */
export class RemoveCmd implements Cmd {
  constructor(
    readonly where: Where | string,
    readonly guard: 'none' | 'known' | 'fresh',
    readonly recursive: boolean,
  ) {}
  check = (): true => true
  async run(m: Model, env: Env): Promise<void> {
    await yieldToLoop()
    const path = typeof this.where === 'string' ? this.where : this.where.in(m)
    const t = tally(m, 'remove')
    if (this.guard === 'fresh') await observe(m, env, path)
    const content = m.files.get(path)
    const dir = content === undefined ? dirState(m, path) : 'no'
    const inside = below(m, path)
    let allowed: (FsErrorCode | 'ok')[]
    if (content !== undefined) {
      const state = this.guard === 'none' ? 'ok' : guardState(m, path)
      allowed = state === 'ok' ? ['ok'] : state === 'stale' ? ['FS_STALE_VERSION'] : ['ok', 'FS_STALE_VERSION']
    } else if (dir === 'no') allowed = [this.guard === 'none' ? 'FS_NOT_FOUND' : 'FS_STALE_VERSION']
    // The model never observes a directory's version: a guard on one is stale.
    else if (this.guard !== 'none') allowed = ['FS_STALE_VERSION']
    else if (dir === 'maybe') allowed = ['ok', 'FS_NOT_FOUND', ...(this.recursive || inside.maybe === 0 ? [] : ['FS_NOT_EMPTY' as const])]
    else if (!this.recursive && inside.files + inside.dirs > 0) allowed = ['FS_NOT_EMPTY']
    else allowed = this.recursive || inside.maybe === 0 ? ['ok'] : ['ok', 'FS_NOT_EMPTY']
    const expected = this.guard === 'none' ? undefined : { version: m.known.get(path)?.version ?? NEVER }
    const target = await env.resolve(path)
    const what = `remove(${path}${this.recursive ? ', recursive' : ''}${this.guard === 'none' ? '' : `, ${this.guard} guard`})`
    const outcome = await attempt(() => env.fs.remove(target, { expected, recursive: this.recursive }), allowed, what)
    if (outcome === undefined) return
    t.ok++
    same(outcome.type, content === undefined ? 'directory' : 'file', `the type of ${what}`)
    if (content !== undefined || !this.recursive) same(outcome.entries, 1, `the entries of ${what}`)
    else {
      // Every file and every directory that must be there; emptied ones where the store keeps them.
      const least = m.world.caps.emptyDirectories ? 1 + inside.files + inside.dirs : inside.files
      const most = 1 + inside.files + inside.dirs + inside.maybe
      if (outcome.entries < least || outcome.entries > most) same(outcome.entries, `${least}..${most}`, `the entries of ${what}`)
    }
    dropBelow(m, path)
    await observe(m, env, path)
  }
  toString = (): string => {
    const where = typeof this.where === 'string' ? this.where : this.where.shown()
    return `remove(${where}${this.recursive ? ', recursive' : ''}${this.guard === 'none' ? '' : `, ${this.guard} guard`})`
  }
}

/** `rename` of a file, onto a missing path, a file (with or without `overwrite`), a directory, or itself. */
export class RenameCmd implements Cmd {
  constructor(
    readonly from: Where,
    readonly to: string,
    readonly overwrite: 'no' | 'any' | 'version',
    readonly guard: 'none' | 'known' | 'fresh',
  ) {}
  // A file never lands where file paths go through (`d`, `x`): only onto such a directory while it surely is one.
  check = (m: Model): boolean => dirState(m, this.from.in(m)) === 'no' && (!['d', 'x'].includes(this.to) || dirState(m, this.to) === 'yes')
  async run(m: Model, env: Env): Promise<void> {
    await yieldToLoop()
    const from = this.from.in(m)
    const to = this.to
    const t = tally(m, 'rename')
    if (this.guard === 'fresh') await observe(m, env, from)
    const source = m.files.get(from)
    const dest = m.files.get(to)
    const errors = new Set<FsErrorCode>()
    let mayWork = true
    const fail = (code: FsErrorCode, surely: boolean): void => {
      errors.add(code)
      if (surely) mayWork = false
    }
    if (source === undefined) fail(this.guard === 'none' ? 'FS_NOT_FOUND' : 'FS_STALE_VERSION', true)
    else if (this.guard !== 'none' && guardState(m, from) !== 'ok') fail('FS_STALE_VERSION', guardState(m, from) === 'stale')
    if (from !== to) {
      const destDir = dest === undefined ? dirState(m, to) : 'no'
      if (destDir !== 'no') fail(this.overwrite === 'no' ? 'FS_NOT_OBSERVED' : 'FS_NOT_REGULAR_FILE', destDir === 'yes')
      else if (dest !== undefined && this.overwrite === 'no') fail('FS_NOT_OBSERVED', true)
      else if (dest !== undefined && this.overwrite === 'version' && guardState(m, to) !== 'ok') fail('FS_STALE_VERSION', guardState(m, to) === 'stale')
    }
    const expected = this.guard === 'none' ? undefined : { version: m.known.get(from)?.version ?? NEVER }
    const overwrite = this.overwrite === 'no' ? false : this.overwrite === 'any' ? true : { version: m.known.get(to)?.version ?? NEVER }
    const [a, b] = [await env.resolve(from), await env.resolve(to)]
    const what = `rename(${from} → ${to}, overwrite ${this.overwrite}${this.guard === 'none' ? '' : `, ${this.guard} guard`})`
    const outcome = await attempt(() => env.fs.rename(a, b, { expected, overwrite }), [...(mayWork ? ['ok' as const] : []), ...errors], what)
    if (outcome === undefined || source === undefined) return
    t.ok++
    same(outcome.type, 'file', `the type of ${what}`)
    if (from === to) {
      same(outcome.replaced, false, `replaced, of ${what} (one file)`)
      if (guardState(m, from) === 'ok') same(outcome.version, m.known.get(from)?.version, `the version of ${what} (one file: nothing changes)`)
      return
    }
    same(outcome.replaced, dest !== undefined, `replaced, of ${what}`)
    dropBelow(m, from)
    m.files.set(to, source)
    m.known.set(to, { version: outcome.version, content: source, touched: false })
    // A moved file keeps its own mtime where the store moves it: no floor from what was there.
    m.mtimes.delete(to)
    addParents(m, to)
    await observe(m, env, from)
    await observe(m, env, to)
    await expectStored(m, env, to, what)
  }
  toString = (): string => `rename(${this.from.shown()} → ${this.to}, overwrite ${this.overwrite}${this.guard === 'none' ? '' : `, ${this.guard} guard`})`
}

/** `rename` of a directory (with what is below it) onto a missing path, an existing directory, or inside itself. */
export class DirRenameCmd implements Cmd {
  constructor(
    readonly from: string,
    readonly to: string,
  ) {}
  /** A file at `from` (one moved to `y`) is RenameCmd's. */
  check = (m: Model): boolean => !m.files.has(this.from)
  async run(m: Model, env: Env): Promise<void> {
    await yieldToLoop()
    const { from, to } = this
    const t = tally(m, 'rename directory')
    const state = dirState(m, from)
    const errors = new Set<FsErrorCode>()
    let mayWork = true
    const fail = (code: FsErrorCode, surely: boolean): void => {
      errors.add(code)
      if (surely) mayWork = false
    }
    if (state !== 'yes') fail('FS_NOT_FOUND', state === 'no')
    if (state !== 'no' && m.world.caps.renameDirectories !== true) fail('FS_UNSUPPORTED', true)
    if (under(to, from)) fail('FS_UNSUPPORTED', true)
    const destDir = dirState(m, to)
    if (m.files.has(to) || destDir !== 'no') fail('FS_NOT_OBSERVED', m.files.has(to) || destDir === 'yes')
    const [a, b] = [await env.resolve(from), await env.resolve(to)]
    const what = `rename(${from}/ → ${to}/)`
    const outcome = await attempt(() => env.fs.rename(a, b), [...(mayWork ? ['ok' as const] : []), ...errors], what)
    if (outcome === undefined) return
    t.ok++
    same(outcome.type, 'directory', `the type of ${what}`)
    same(outcome.replaced, false, `replaced, of ${what}`)
    const moved = (path: string): string => to + path.slice(from.length)
    const files = [...m.files].filter(([p]) => under(p, from))
    const made = [...m.made].filter((p) => under(p, from))
    const dirs = [...m.dirs].filter((p) => under(p, from))
    // Versions of what moved are not carried over: a store that copies gives new ones.
    dropBelow(m, from)
    for (const [path, content] of files) {
      m.files.set(moved(path), content)
      addParents(m, moved(path))
    }
    for (const path of made) m.made.add(moved(path))
    for (const path of [...dirs, from]) m.dirs.add(moved(path))
    addParents(m, to)
    await observe(m, env, from)
    await observe(m, env, to)
    for (const [path] of files) await expectStored(m, env, moved(path), what)
  }
  toString = (): string => `renameDirectory(${this.from} → ${this.to})`
}

/** `createDirectory` of a new, an existing or an emptied directory, or of a file's path. */
export class MkdirCmd implements Cmd {
  constructor(readonly path: string) {}
  check = (): true => true
  async run(m: Model, env: Env): Promise<void> {
    await yieldToLoop()
    const path = this.path
    const t = tally(m, 'create directory')
    const state = dirState(m, path)
    const target = await env.resolve(path)
    const what = `createDirectory(${path})`
    const outcome = await attempt(() => env.fs.createDirectory(target), m.files.has(path) ? ['FS_NOT_DIRECTORY'] : ['ok'], what)
    if (outcome === undefined) return
    t.ok++
    if (state !== 'maybe') same(outcome.created, state === 'no', `created, of ${what} where the directory is ${state === 'no' ? 'not there' : 'there'}`)
    if (path !== '.') {
      m.made.add(path)
      m.dirs.add(path)
    }
    addParents(m, path)
    await observe(m, env, path)
  }
  toString = (): string => `createDirectory(${this.path})`
}

/** `streamBytes`, `streamText` or `openFile` of a path: open-time failures reject the returned promise; the chunks are the file. */
export class OpenCmd implements Cmd {
  constructor(
    readonly path: string,
    readonly via: 'streamBytes' | 'streamText' | 'openFile',
  ) {}
  check = (): true => true
  async run(m: Model, env: Env): Promise<void> {
    await yieldToLoop()
    const t = tally(m, 'stream or open')
    const content = m.files.get(this.path)
    const target = await env.resolve(this.path)
    const what = `${this.via}(${this.path})`
    if (content === undefined) {
      // Rejected by the returned promise itself, never later by the iterator.
      const opening = this.via === 'openFile' ? env.fs.openFile(target) : this.via === 'streamText' ? env.fs.streamText(target) : env.fs.streamBytes(target)
      within(await codeOf(opening), absentCodes(m, this.path, 'FS_NOT_FOUND'), `${what} of no file`)
      return
    }
    const expected = bytesOf(content)
    if (this.via === 'streamText') {
      const text = await attempt(async () => (await collect(await env.fs.streamText(target))).join(''), [content instanceof Bin ? 'FS_NOT_TEXT' : 'ok'], what)
      if (typeof content === 'string') same(text, textOf(content), what)
    } else if (this.via === 'streamBytes') {
      same(Buffer.concat(await collect(await env.fs.streamBytes(target))).toString('hex'), Buffer.from(expected).toString('hex'), what)
    } else {
      const opened = await env.fs.openFile(target)
      try {
        same(opened.info.size, expected.length, `the size ${what} gives`)
        const known = m.known.get(this.path)
        if (known !== undefined && guardState(m, this.path) === 'ok')
          same(opened.info.version, known.version, `the version ${what} gives while the file is unchanged`)
        same(Buffer.concat(await collect(opened.chunks)).toString('hex'), Buffer.from(expected).toString('hex'), `the chunks of ${what}`)
      } finally {
        await opened.close()
      }
    }
    t.ok++
  }
  toString = (): string => `${this.via}(${this.path})`
}

/** `listTree` of a directory: every entry below it once, files and directories the model has (emptied ones optional). */
export class TreeCmd implements Cmd {
  constructor(readonly dir: string) {}
  check = (): true => true
  async run(m: Model, env: Env): Promise<void> {
    await yieldToLoop()
    const t = tally(m, 'list tree')
    const state = dirState(m, this.dir)
    const target = await env.resolve(this.dir)
    const what = `listTree(${this.dir})`
    const allowed: (FsErrorCode | 'ok')[] = m.files.has(this.dir)
      ? ['FS_NOT_DIRECTORY']
      : state === 'yes'
        ? ['ok']
        : state === 'maybe'
          ? ['ok', 'FS_NOT_FOUND']
          : ['FS_NOT_FOUND']
    // Refused by the returned promise, before any page.
    const pages = await attempt(() => env.fs.listTree(target), allowed, what)
    if (pages === undefined) return
    const prefix = this.dir === '.' ? '' : `${this.dir}/`
    const required = new Map<string, 'file' | 'directory'>()
    const optional = new Set<string>()
    const need = (path: string): void => {
      for (let i = path.indexOf('/', prefix.length); i !== -1; i = path.indexOf('/', i + 1)) required.set(path.slice(prefix.length, i), 'directory')
    }
    for (const path of m.files.keys()) {
      if (!path.startsWith(prefix) || path === this.dir) continue
      required.set(path.slice(prefix.length), 'file')
      need(path)
    }
    for (const path of m.made) {
      if (!path.startsWith(prefix) || path === this.dir) continue
      required.set(path.slice(prefix.length), 'directory')
      need(path)
    }
    for (const path of m.dirs) if (path.startsWith(prefix) && path !== this.dir) optional.add(path.slice(prefix.length))
    const listed = new Map<string, string>()
    for await (const page of pages) {
      for (const entry of page) {
        if (listed.has(entry.path)) same(`${entry.path} twice`, `${entry.path} once`, `an entry of ${what}`)
        listed.set(entry.path, entry.type)
      }
    }
    for (const [path, type] of required) same(listed.get(path), type, `the type of ${path} in ${what}`)
    for (const [path, type] of listed)
      if (!required.has(path)) same(optional.has(path) ? type : 'nothing', 'directory', `an unexpected entry ${path} (${type}) in ${what}`)
    t.ok++
  }
  toString = (): string => `listTree(${this.dir})`
}

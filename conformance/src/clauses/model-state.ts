import type fc from 'fast-check'
import { expect } from 'vitest'
import { FsVersion, type FsCapabilities, type FsErrorCode, type FsWriteIntent } from '@seamfs/core/backend'
import { codeOf, type Env } from '../kit.js'

// The model of the model-based test: the deliberately plain picture of the store the backend is
// checked against (content by path, the directories, what was last observed), how it changes, and
// the checks that compare the two. The commands are in model-commands.ts and model-tree.ts, the
// property run in model.ts.

/** The file paths: `d/e/f.txt` and `x/f.txt` trade places when a directory moves. */
export const PATHS = ['a.txt', 'b.txt', 'd/c.txt', 'd/e/f.txt', 'x/f.txt'] as const
export type Path = (typeof PATHS)[number]
/** The directories listed and created (`y` never holds a file); the file paths may become directories too. */
export const DIRS = ['.', 'd', 'd/e', 'x', 'y'] as const
export const NEVER = FsVersion('never-observed')
export const BOM = '\uFEFF'

/** Bytes that are not text (invalid UTF-8, or a NUL): stored and read as bytes, refused as text. */
export class Bin {
  constructor(readonly bytes: Uint8Array) {}
  toString(): string {
    return `bytes(${[...this.bytes].map((b) => b.toString(16).padStart(2, '0')).join(' ')})`
  }
}

/** A file's content: text (its UTF-8 encoding is the file's bytes; a BOM is a leading U+FEFF), or bytes that are not text. */
export type Content = string | Bin

/** Attempts and successes of one kind of command, over the whole property run. */
export type Tally = { attempts: number; ok: number }

/** What outlives one run: the tallies, and what the backend offers. */
export interface World {
  readonly tallies: Map<string, Tally>
  readonly readBytes: boolean
  /** What the backend declares: `mtime`, `emptyDirectories`, `renameDirectories`… */
  readonly caps: FsCapabilities
}

/** The deliberately plain model: stored content by path, the directories, and what the test last observed of each file. */
export interface Model {
  readonly files: Map<string, Content>
  /** Version last observed per path, the content it had, and whether the store changed behind our back since. */
  readonly known: Map<string, { version: FsVersion; content: Content; touched: boolean }>
  /** Directories that once held something: a listing may still show them after they were emptied (S3 drops them). */
  readonly dirs: Set<string>
  /** Directories `createDirectory` made: they stay, empty or not, until removed or moved. */
  readonly made: Set<string>
  /** Per file, the last `mtime` seen and whether the file changed since (`exact` false): the next must equal it, or not be earlier. */
  readonly mtimes: Map<string, { mtime: number; exact: boolean }>
  readonly world: World
}

export type Cmd = fc.AsyncCommand<Model, Env>

const encoder = new TextEncoder()
/** The stored bytes of `content`. */
export const bytesOf = (content: Content): Uint8Array => (content instanceof Bin ? content.bytes : encoder.encode(content))
export function sameContent(a: Content, b: Content): boolean {
  if (typeof a === 'string' || typeof b === 'string') return a === b
  return a.bytes.length === b.bytes.length && a.bytes.every((byte, i) => byte === b.bytes[i])
}

/** Where `path` is a directory: `yes` (the root, made, or above a file or a made directory), `maybe` (emptied: S3 drops it), or `no`. */
export function dirState(m: Model, path: string): 'yes' | 'maybe' | 'no' {
  if (path === '.' || m.made.has(path)) return 'yes'
  const prefix = `${path}/`
  for (const p of m.files.keys()) if (p.startsWith(prefix)) return 'yes'
  for (const p of m.made) if (p.startsWith(prefix)) return 'yes'
  return m.dirs.has(path) ? 'maybe' : 'no'
}

/** The codes a file operation on `path` may get where the model has no file there: `missing`'s, or a directory's. */
export function absentCodes(m: Model, path: string, missing: FsErrorCode): FsErrorCode[] {
  const dir = dirState(m, path)
  return dir === 'yes' ? ['FS_NOT_REGULAR_FILE'] : dir === 'maybe' ? [missing, 'FS_NOT_REGULAR_FILE'] : [missing]
}

/** The codes a write (text or bytes) of `path` with `guard` may get: `ok` unless a guard fails or a directory is there. */
export function writeCodes(m: Model, path: string, guard: 'none' | 'create' | 'replace'): FsErrorCode[] | ['ok'] | ['ok', 'FS_STALE_VERSION'] {
  if (m.files.get(path) === undefined && dirState(m, path) === 'yes') {
    return guard === 'none' ? ['FS_NOT_REGULAR_FILE'] : ['FS_NOT_REGULAR_FILE', guard === 'create' ? 'FS_NOT_OBSERVED' : 'FS_STALE_VERSION']
  }
  if (guard === 'create') return m.files.has(path) ? ['FS_NOT_OBSERVED'] : ['ok']
  if (guard === 'none') return ['ok']
  const state = guardState(m, path)
  return state === 'ok' ? ['ok'] : state === 'stale' ? ['FS_STALE_VERSION'] : ['ok', 'FS_STALE_VERSION']
}

/** The guard a write sends: none, create-if-absent, or the version last observed (else one never seen). */
export function writeGuard(m: Model, path: string, guard: 'none' | 'create' | 'replace'): FsWriteIntent | undefined {
  if (guard === 'none') return undefined
  return guard === 'create' ? { kind: 'createIfAbsent' } : { kind: 'replaceIfVersion', version: m.known.get(path)?.version ?? NEVER }
}

/** Everything the model holds at or below `dir`: files, made and once-seen directories, with what was observed of them. */
export function dropBelow(m: Model, dir: string): void {
  const under = (p: string): boolean => p === dir || p.startsWith(`${dir}/`)
  for (const map of [m.files, m.known, m.mtimes]) for (const p of [...map.keys()]) if (under(p)) map.delete(p)
  for (const set of [m.dirs, m.made]) for (const p of [...set]) if (under(p)) set.delete(p)
}

export const show = (s: string): string => JSON.stringify(s).replaceAll(BOM, '\\ufeff')
export const lf = (s: string): string => s.replaceAll('\r\n', '\n')
/** The text a read returns: the stored content without its BOM. */
export const textOf = (stored: string): string => (stored.startsWith(BOM) ? stored.slice(BOM.length) : stored)
/** A content as the test prints it. */
export const shown = (content: Content): string => (content instanceof Bin ? String(content) : show(content))

export function tally(m: Model, kind: string): Tally {
  let t = m.world.tallies.get(kind)
  if (t === undefined) m.world.tallies.set(kind, (t = { attempts: 0, ok: 0 }))
  t.attempts++
  return t
}

export function addParents(m: Model, path: string): void {
  for (let i = path.indexOf('/'); i !== -1; i = path.indexOf('/', i + 1)) m.dirs.add(path.slice(0, i))
}

/** `path`'s file changed: its next `mtime` may be later than the last one seen, never earlier. */
export function changed(m: Model, path: string): void {
  const seen = m.mtimes.get(path)
  if (seen !== undefined) seen.exact = false
}

/** The store changed `path` behind our back. */
export function touch(m: Model, path: string, content: Content | undefined): void {
  if (content === undefined) m.files.delete(path)
  else m.files.set(path, content)
  addParents(m, path)
  if (content === undefined) m.mtimes.delete(path)
  else changed(m, path)
  const known = m.known.get(path)
  if (known !== undefined) known.touched = true
}

/**
 * The stored content after a literal edit, worked out unit by unit: a unit is a character, or a
 * line break stored as LF or CRLF. Matches are found on the units' characters; matched units are
 * dropped; inserted line breaks take the ending most breaks of the file's first 4096 characters
 * have (LF on a tie); every other unit, and the BOM, keeps its stored form.
 */
export function editedContent(stored: string, oldLf: string, newLf: string, replaceAll: boolean): { matches: number; next?: string } {
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
  const inserted = newLf.replaceAll('\n', dominantEnding(text))
  let next = bom
  let from = 0
  for (const start of starts) {
    next += units.slice(from, start).join('') + inserted
    from = start + oldLf.length
  }
  return { matches: starts.length, next: next + units.slice(from).join('') }
}

/** The ending most line breaks in the first 4096 UTF-16 units of `text` (after its BOM) have; LF on a tie. */
function dominantEnding(text: string): '\n' | '\r\n' {
  const head = text.slice(0, 4096)
  let crlf = 0
  let lf = 0
  for (let i = head.indexOf('\n'); i !== -1; i = head.indexOf('\n', i + 1)) {
    if (head[i - 1] === '\r') crlf++
    else lf++
  }
  return crlf > lf ? '\r\n' : '\n'
}

/** What a guard built from the model should meet: `ok`, `stale`, or `either` after an external same-content change. */
export function guardState(m: Model, path: string): 'ok' | 'stale' | 'either' {
  const known = m.known.get(path)
  const content = m.files.get(path)
  if (known === undefined || content === undefined) return 'stale'
  if (!known.touched) return 'ok'
  return sameContent(content, known.content) ? 'either' : 'stale'
}

// vitest's expect costs tens of µs and a property run makes tens of thousands of checks: these call it on a mismatch only.
export function same(actual: unknown, expected: unknown, what: string): void {
  if (!Object.is(actual, expected)) expect(actual, what).toBe(expected)
}

export function within<T>(actual: T, allowed: readonly T[], what: string): void {
  if (!allowed.includes(actual)) expect(allowed, what).toContain(actual)
}

export function differs(actual: unknown, other: unknown, what: string): void {
  if (Object.is(actual, other)) expect(actual, what).not.toBe(other)
}

/**
 * `stat` agrees with the model (type, size, the version while unchanged, `mtime` never earlier
 * than before and unchanged while the file is); the version it returns becomes the one observed.
 */
export async function observe(m: Model, env: Env, path: string): Promise<boolean> {
  const content = m.files.get(path)
  const info = await env.fs.stat(await env.resolve(path))
  if (content === undefined) {
    const dir = dirState(m, path)
    if (dir === 'no') same(info, undefined, `stat(${path}) of a missing file`)
    else if (dir === 'yes' || info !== undefined) same(info?.type, 'directory', `stat(${path}).type of a directory`)
    return false
  }
  same(info?.type, 'file', `stat(${path}).type`)
  same(info?.size, bytesOf(content).length, `stat(${path}).size`)
  const state = guardState(m, path)
  const known = m.known.get(path)
  if (known !== undefined && state === 'ok') same(info?.version, known.version, `stat(${path}).version while the content is unchanged`)
  if (known !== undefined && state === 'stale') differs(info?.version, known.version, `stat(${path}).version after the content changed`)
  if (info === undefined) return true
  m.known.set(path, { version: info.version, content, touched: false })
  if (m.world.caps.mtime === true) checkMtime(m, path, info.mtime)
  return true
}

/** Where `capabilities.mtime`: a finite number, equal to the last one seen while nothing changed, never earlier after a change. */
function checkMtime(m: Model, path: string, mtime: number | undefined): void {
  if (typeof mtime !== 'number' || !Number.isFinite(mtime))
    expect.fail(`stat(${path}).mtime is ${String(mtime)}, though capabilities.mtime says stat reports it`)
  const seen = m.mtimes.get(path)
  if (seen?.exact === true) same(mtime, seen.mtime, `stat(${path}).mtime while the file is unchanged`)
  if (seen !== undefined && mtime < seen.mtime) expect.fail(`stat(${path}).mtime went back after a change: ${mtime} < ${seen.mtime}`)
  m.mtimes.set(path, { mtime, exact: true })
}

/** The stored bytes are the model's, byte for byte (CRLFs, BOM, untouched bytes); without a readBytes hook, what `readText` gives is. */
export async function expectStored(m: Model, env: Env, path: string, after = `writeText(${path})`): Promise<void> {
  const content = m.files.get(path) ?? ''
  if (!m.world.readBytes) {
    if (content instanceof Bin) same(await codeOf(env.read(path)), 'FS_NOT_TEXT', `readText(${path}) of bytes that are not text, after ${after}`)
    else same(await env.read(path), textOf(content), `readText(${path}) after ${after}`)
    return
  }
  const stored = await env.readBytes(path)
  const expected = bytesOf(content)
  if (stored.length === expected.length && stored.every((b, i) => b === expected[i])) return
  const found = new TextDecoder('utf-8', { ignoreBOM: true }).decode(stored)
  expect.fail(`after ${after}, the stored bytes are not the model's:\n  stored:   ${show(found)}\n  expected: ${shown(content)}`)
}

/** A path fixed when generated, or one of the paths the model has (or lacks) when the command runs. */
export class Where {
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

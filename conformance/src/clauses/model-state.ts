import type fc from 'fast-check'
import { expect } from 'vitest'
import { FsVersion } from '@seamfs/core/backend'
import type { Env } from '../kit.js'

// The model of the model-based test: the deliberately plain picture of the store the backend is
// checked against (content by path, what was last observed), how it changes, and the checks that
// compare the two. The commands are in model-commands.ts, the property run in model.ts.

export const PATHS = ['a.txt', 'b.txt', 'd/c.txt', 'd/e/f.txt'] as const
export type Path = (typeof PATHS)[number]
export const NEVER = FsVersion('never-observed')
export const BOM = '\uFEFF'

/** Attempts and successes of one kind of command, over the whole property run. */
export type Tally = { attempts: number; ok: number }

/** What outlives one run: the tallies, and which external hooks the backend gave. */
export interface World {
  readonly tallies: Map<string, Tally>
  readonly readBytes: boolean
}

/** The deliberately plain model: stored content by path, and what the test last observed of each. */
export interface Model {
  /** Content exactly as stored: its UTF-8 encoding is the file's bytes (a BOM is a leading U+FEFF). */
  readonly files: Map<string, string>
  /** Version last observed per path, the content it had, and whether the store changed behind our back since. */
  readonly known: Map<string, { version: FsVersion; content: string; touched: boolean }>
  /** Directories that once held a file: a listing may still show them after their files are deleted. */
  readonly dirs: Set<string>
  readonly world: World
}

export type Cmd = fc.AsyncCommand<Model, Env>

export const show = (s: string): string => JSON.stringify(s).replaceAll(BOM, '\\ufeff')
export const lf = (s: string): string => s.replaceAll('\r\n', '\n')
/** The text a read returns: the stored content without its BOM. */
export const textOf = (stored: string): string => (stored.startsWith(BOM) ? stored.slice(BOM.length) : stored)

export function tally(m: Model, kind: string): Tally {
  let t = m.world.tallies.get(kind)
  if (t === undefined) m.world.tallies.set(kind, (t = { attempts: 0, ok: 0 }))
  t.attempts++
  return t
}

export function addParents(m: Model, path: string): void {
  for (let i = path.indexOf('/'); i !== -1; i = path.indexOf('/', i + 1)) m.dirs.add(path.slice(0, i))
}

/** The store changed `path` behind our back. */
export function touch(m: Model, path: string, content: string | undefined): void {
  if (content === undefined) m.files.delete(path)
  else m.files.set(path, content)
  addParents(m, path)
  const known = m.known.get(path)
  if (known !== undefined) known.touched = true
}

/**
 * The stored content after a literal edit, worked out unit by unit: a unit is a character, or a
 * line break stored as LF or CRLF. Matches are found on the units' characters; matched units are
 * dropped; inserted line breaks take the ending most breaks of the file have (LF on a tie); every
 * other unit, and the BOM, keeps its stored form.
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
export function guardState(m: Model, path: string): 'ok' | 'stale' | 'either' {
  const known = m.known.get(path)
  const content = m.files.get(path)
  if (known === undefined || content === undefined) return 'stale'
  if (!known.touched) return 'ok'
  return content === known.content ? 'either' : 'stale'
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

/** `stat` agrees with the model; the version it returns becomes the one observed. */
export async function observe(m: Model, env: Env, path: string): Promise<boolean> {
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
export async function expectStored(m: Model, env: Env, path: string, after = `writeText(${path})`): Promise<void> {
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

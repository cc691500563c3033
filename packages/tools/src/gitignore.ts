/**
 * The patterns of `.gitignore` and `.ignore` files, as gitignore(5) defines them, compiled once and
 * matched without regular expressions: a pattern runs as a small automaton over the path's
 * characters, in time proportional to the pattern's length times the path's, whatever the pattern
 * (an ignore file comes from the tree being searched, and a regular expression built from
 * `*a*a*a*a*b` could backtrack for minutes).
 *
 * Rules of a file:
 * - a leading BOM is dropped; lines are split on `\n`, one trailing `\r` dropped; a blank line, and
 *   a line starting with `#`, is nothing;
 * - trailing spaces are dropped unless escaped (`\ `); `\#` and `\!` start a pattern with `#` or `!`;
 * - `!` negates: a path the pattern matches is re-included; of the lines matching a path, the last decides;
 * - one trailing `/` makes the pattern match directories only;
 * - a `/` at the start or in the middle anchors the pattern to the file's directory: it is matched
 *   against the path relative to that directory (a leading `/` is dropped); without one, it is
 *   matched against the name alone, at any depth;
 * - `*` matches any run of characters but `/`, `?` one character but `/`, `[...]` one character of a
 *   set (`[!...]` or `[^...]` outside it; ranges; `[:alpha:]` and the other POSIX classes, ASCII;
 *   never `/`); `\` makes the next character literal;
 * - `**` as a whole segment: leading (`**` then `/`) it matches any leading directories (none
 *   included), trailing (`/` then `**`) everything inside, in the middle (between two `/`) zero or
 *   more directories; any other `**` is `*`;
 * - a pattern that does not parse (an unclosed `[`, an unknown class, a trailing lone `\`) matches
 *   nothing, as git's wildmatch does.
 *
 * Characters are Unicode code points, compared exactly (no case folding); git compares bytes.
 */

/** One step of a compiled pattern. */
type Token =
  | { readonly kind: 'char'; readonly cp: number }
  | { readonly kind: 'one' }
  | { readonly kind: 'star' }
  /** Any run of characters, `/` included. */
  | { readonly kind: 'any' }
  /** Either on to the next token or, without consuming anything, to `to` (a `**` and its `/` skipped as a whole). */
  | { readonly kind: 'fork'; readonly to: number }
  | { readonly kind: 'set'; readonly negated: boolean; readonly ranges: readonly number[]; readonly classes: readonly string[] }

const SLASH = 0x2f

/** A compiled glob: its tokens, and the literal head and tail every match starts and ends with (a quick refusal). */
interface Glob {
  readonly tokens: readonly Token[]
  /** Set when the pattern is a literal: then it matches that string only. */
  readonly literal: string | undefined
  readonly head: string
  readonly tail: string
  /** Set when the pattern holds only characters and `*`: the literal runs between the stars (the first and last may be empty). */
  readonly runs: readonly string[] | undefined
}

/** One pattern line of an ignore file. */
export interface IgnoreRule {
  /** The line as written (trailing spaces dropped). */
  readonly source: string
  /** A match re-includes (`!`). */
  readonly negated: boolean
  /** Matches directories only (a trailing `/`). */
  readonly dirOnly: boolean
  /** Matched against the path relative to the file's directory (a leading or middle `/`); else against the name. */
  readonly anchored: boolean
  readonly glob: Glob
}

const POSIX_CLASSES: Readonly<Record<string, (c: number) => boolean>> = {
  alnum: (c) => isAlpha(c) || isDigit(c),
  alpha: (c) => isAlpha(c),
  blank: (c) => c === 0x20 || c === 0x09,
  cntrl: (c) => c < 0x20 || c === 0x7f,
  digit: (c) => isDigit(c),
  graph: (c) => c > 0x20 && c < 0x7f,
  lower: (c) => c >= 0x61 && c <= 0x7a,
  print: (c) => c >= 0x20 && c < 0x7f,
  punct: (c) => c > 0x20 && c < 0x7f && !isAlpha(c) && !isDigit(c),
  space: (c) => c === 0x20 || (c >= 0x09 && c <= 0x0d),
  upper: (c) => c >= 0x41 && c <= 0x5a,
  xdigit: (c) => isDigit(c) || (c >= 0x41 && c <= 0x46) || (c >= 0x61 && c <= 0x66),
}

function isAlpha(c: number): boolean {
  return (c >= 0x41 && c <= 0x5a) || (c >= 0x61 && c <= 0x7a)
}

function isDigit(c: number): boolean {
  return c >= 0x30 && c <= 0x39
}

/** Parses a bracket expression whose `[` is at `chars[start]`: the token and the index after its `]`, or undefined when it does not close. */
function parseSet(chars: readonly string[], start: number): { token: Token; next: number } | undefined {
  let i = start + 1
  const negated = chars[i] === '!' || chars[i] === '^'
  if (negated) i++
  const ranges: number[] = []
  const classes: string[] = []
  let first = true
  for (;;) {
    let c = chars[i]
    if (c === undefined) return undefined
    if (c === ']' && !first) return { token: { kind: 'set', negated, ranges, classes }, next: i + 1 }
    first = false
    if (c === '[' && chars[i + 1] === ':') {
      const close = chars.indexOf(':', i + 2)
      if (close === -1 || chars[close + 1] !== ']') return undefined
      const name = chars.slice(i + 2, close).join('')
      if (!Object.hasOwn(POSIX_CLASSES, name)) return undefined
      classes.push(name)
      i = close + 2
      continue
    }
    if (c === '\\') {
      c = chars[++i]
      if (c === undefined) return undefined
    }
    const low = c.codePointAt(0) ?? 0
    i++
    if (chars[i] === '-' && chars[i + 1] !== undefined && chars[i + 1] !== ']') {
      let h = chars[i + 1] as string
      i += 2
      if (h === '\\') {
        const escaped = chars[i++]
        if (escaped === undefined) return undefined
        h = escaped
      }
      ranges.push(low, h.codePointAt(0) ?? 0)
    } else {
      ranges.push(low, low)
    }
  }
}

/** Compiles a pattern (`!`, the trailing `/` and a leading `/` already taken off), or undefined when it does not parse. */
export function compileGlob(pattern: string): Glob | undefined {
  const chars = [...pattern]
  const tokens: Token[] = []
  let i = 0
  while (i < chars.length) {
    const c = chars[i] as string
    if (c === '*') {
      let end = i
      while (chars[end] === '*') end++
      const whole = end - i >= 2 && (i === 0 || chars[i - 1] === '/') && (end === chars.length || chars[end] === '/')
      if (!whole) tokens.push({ kind: 'star' })
      else if (end === chars.length) tokens.push({ kind: 'any' })
      else {
        // A `**` segment then `/`: nothing at all, or any run then the slash.
        tokens.push({ kind: 'fork', to: tokens.length + 3 }, { kind: 'any' }, { kind: 'char', cp: SLASH })
        end++
      }
      i = end
    } else if (c === '?') {
      tokens.push({ kind: 'one' })
      i++
    } else if (c === '[') {
      const set = parseSet(chars, i)
      if (set === undefined) return undefined
      tokens.push(set.token)
      i = set.next
    } else if (c === '\\') {
      const escaped = chars[i + 1]
      if (escaped === undefined) return undefined
      tokens.push({ kind: 'char', cp: escaped.codePointAt(0) ?? 0 })
      i += 2
    } else {
      tokens.push({ kind: 'char', cp: c.codePointAt(0) ?? 0 })
      i++
    }
  }
  const literalRun = (from: number, step: 1 | -1): string => {
    const cps: number[] = []
    for (let k = from; k >= 0 && k < tokens.length; k += step) {
      const t = tokens[k] as Token
      // The `/` after a `**` segment may be jumped over: it is no part of every match.
      if (t.kind !== 'char' || tokens[k - 2]?.kind === 'fork') break
      cps.push(t.cp)
    }
    return String.fromCodePoint(...(step === 1 ? cps : cps.reverse()))
  }
  const head = literalRun(0, 1)
  const literal = tokens.every((t) => t.kind === 'char') ? head : undefined
  let runs: string[] | undefined
  if (literal === undefined && tokens.every((t) => t.kind === 'char' || t.kind === 'star')) {
    runs = ['']
    for (const t of tokens) {
      if (t.kind === 'star') runs.push('')
      else if (t.kind === 'char') runs[runs.length - 1] += String.fromCodePoint(t.cp)
    }
  }
  return { tokens, literal, head, tail: literalRun(tokens.length - 1, -1), runs }
}

function inSet(token: Extract<Token, { kind: 'set' }>, cp: number): boolean {
  let hit = false
  for (let k = 0; k < token.ranges.length && !hit; k += 2) hit = cp >= (token.ranges[k] as number) && cp <= (token.ranges[k + 1] as number)
  if (!hit) hit = token.classes.some((name) => (POSIX_CLASSES[name] as (c: number) => boolean)(cp))
  return hit !== token.negated
}

/** Adds state `i`, and what it reaches without consuming a character, to `states` (those marked `step` are in already). */
function enter(tokens: readonly Token[], states: number[], marks: Int32Array, step: number, i: number): void {
  if (marks[i] === step) return
  marks[i] = step
  states.push(i)
  const t = tokens[i]
  if (t === undefined) return
  if (t.kind === 'star' || t.kind === 'any' || t.kind === 'fork') enter(tokens, states, marks, step, i + 1)
  if (t.kind === 'fork') enter(tokens, states, marks, step, t.to)
}

/**
 * Whether `text` (no `/` in it) is the runs of a pattern of characters and stars with anything
 * between them: its head and tail already checked, the runs between found leftmost, in order.
 */
function runsMatch(runs: readonly string[], text: string): boolean {
  let at = (runs[0] as string).length
  const end = text.length - (runs[runs.length - 1] as string).length
  for (let k = 1; k < runs.length - 1; k++) {
    const run = runs[k] as string
    const found = text.indexOf(run, at)
    if (found === -1 || found + run.length > end) return false
    at = found + run.length
  }
  return true
}

/** Whether the compiled glob matches all of `text`. */
export function globMatches(glob: Glob, text: string): boolean {
  if (glob.literal !== undefined) return text === glob.literal
  if (text.length < glob.head.length + glob.tail.length || !text.startsWith(glob.head) || !text.endsWith(glob.tail)) return false
  if (glob.runs !== undefined && !text.includes('/')) return runsMatch(glob.runs, text)
  const { tokens } = glob
  // The states the automaton is in: a list, and the step that last added each (no set per step).
  const marks = new Int32Array(tokens.length + 1).fill(-1)
  let step = 0
  let states: number[] = []
  enter(tokens, states, marks, step, 0)
  for (const ch of text) {
    const cp = ch.codePointAt(0) ?? 0
    const next: number[] = []
    step++
    for (const i of states) {
      const t = tokens[i]
      if (t === undefined || t.kind === 'fork') continue
      if (t.kind === 'char') {
        if (cp === t.cp) enter(tokens, next, marks, step, i + 1)
      } else if (t.kind === 'any') {
        enter(tokens, next, marks, step, i)
      } else if (cp !== SLASH) {
        if (t.kind === 'star') enter(tokens, next, marks, step, i)
        else if (t.kind === 'one' || inSet(t, cp)) enter(tokens, next, marks, step, i + 1)
      }
    }
    if (next.length === 0) return false
    states = next
  }
  return marks[tokens.length] === step
}

/** The line without its trailing spaces, but an escaped one (`\ `) kept. */
function trimTrailingSpaces(line: string): string {
  let end = line.length
  while (end > 0 && line[end - 1] === ' ') {
    let backslashes = 0
    for (let k = end - 2; k >= 0 && line[k] === '\\'; k--) backslashes++
    if (backslashes % 2 === 1) break
    end--
  }
  return line.slice(0, end)
}

/** One line of an ignore file as a rule, or undefined for a blank line, a comment, or a pattern that matches nothing. */
export function parseIgnoreLine(raw: string): IgnoreRule | undefined {
  if (raw.startsWith('#')) return undefined
  const source = trimTrailingSpaces(raw)
  let body = source
  const negated = body.startsWith('!')
  if (negated) body = body.slice(1)
  const dirOnly = body.endsWith('/')
  if (dirOnly) body = body.slice(0, -1)
  const anchored = body.includes('/')
  if (body.startsWith('/')) body = body.slice(1)
  if (body === '') return undefined
  const glob = compileGlob(body)
  return glob === undefined ? undefined : { source, negated, dirOnly, anchored, glob }
}

/** The rules of an ignore file's text, in order. */
export function parseIgnoreFile(text: string): IgnoreRule[] {
  const rules: IgnoreRule[] = []
  for (const line of (text.startsWith('\ufeff') ? text.slice(1) : text).split('\n')) {
    const rule = parseIgnoreLine(line.endsWith('\r') ? line.slice(0, -1) : line)
    if (rule !== undefined) rules.push(rule)
  }
  return rules
}

/**
 * The rules of one directory's ignore files, in order (a later rule wins), with the literal ones
 * (most lines: `node_modules`, `dist/`) looked up by their text instead of tried one by one.
 */
export class IgnoreRules {
  /** Indexes of the literal rules, by their text; by name and by relative path. */
  readonly #byName = new Map<string, number[]>()
  readonly #byPath = new Map<string, number[]>()
  /** Indexes of the other rules, ascending. */
  readonly #patterns: number[] = []

  constructor(readonly rules: readonly IgnoreRule[]) {
    rules.forEach((rule, index) => {
      const literal = rule.glob.literal
      if (literal === undefined) this.#patterns.push(index)
      else {
        const map = rule.anchored ? this.#byPath : this.#byName
        const list = map.get(literal)
        if (list === undefined) map.set(literal, [index])
        else list.push(index)
      }
    })
  }

  #matches(rule: IgnoreRule, relative: string, name: string, isDir: boolean): boolean {
    if (rule.dirOnly && !isDir) return false
    return globMatches(rule.glob, rule.anchored ? relative : name)
  }

  /** The last rule matching a path (`relative` to the rules' directory, `name` its last segment), or undefined. */
  lastMatch(relative: string, name: string, isDir: boolean): IgnoreRule | undefined {
    let best = -1
    for (const literals of [this.#byName.get(name), this.#byPath.get(relative)]) {
      for (const index of literals ?? []) if (index > best && this.#matches(this.rules[index] as IgnoreRule, relative, name, isDir)) best = index
    }
    for (let k = this.#patterns.length - 1; k >= 0; k--) {
      const index = this.#patterns[k] as number
      if (index < best) break
      if (this.#matches(this.rules[index] as IgnoreRule, relative, name, isDir)) {
        best = index
        break
      }
    }
    return best === -1 ? undefined : this.rules[best]
  }
}

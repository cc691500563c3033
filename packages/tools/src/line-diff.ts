/**
 * A bounded line diff with unified-diff hunks: Myers's greedy forward algorithm ("An O(ND)
 * Difference Algorithm and Its Variations", 1986), O((N+M)·D) time. Among equally short edit
 * scripts it picks the one the `diff` package (jsdiff) picks, so hunks read as they did when the
 * tools used that package (the tests compare the two); unlike it, it gives up, rather than growing,
 * past an edit length or a deadline, and keeps its search state in flat typed arrays.
 */

/** One hunk of a unified diff, as jsdiff's `structuredPatch` gives it. */
export interface LineHunk {
  /** 1-based first line of the hunk in the old text (the line before it when `oldLines` is 0). */
  readonly oldStart: number
  readonly oldLines: number
  readonly newStart: number
  readonly newLines: number
  /** `' '`, `'-'` or `'+'` and the line without its `\n`, each line without one followed by `\ No newline at end of file`. */
  readonly lines: readonly string[]
}

/** The bounds of {@link lineHunks}. */
export interface LineDiffOptions {
  /** Unchanged lines shown around each change. */
  readonly context: number
  /** The most changed lines (added plus removed) searched for; past it the diff gives up. */
  readonly maxEditLength: number
  /** Milliseconds after which the diff gives up. */
  readonly timeoutMs: number
}

const EQUAL = 0
const REMOVED = 1
const ADDED = 2
type Kind = typeof EQUAL | typeof REMOVED | typeof ADDED

/** A run of lines of one kind, in order. */
interface Run {
  readonly kind: Kind
  readonly lines: readonly string[]
}

/** Both texts' lines as small integers, equal lines equal, so comparing a line costs one integer compare. */
function intern(a: readonly string[], b: readonly string[]): { a: Int32Array; b: Int32Array } {
  const ids = new Map<string, number>()
  const idsOf = (lines: readonly string[]): Int32Array => {
    const out = new Int32Array(lines.length)
    lines.forEach((line, i) => {
      let id = ids.get(line)
      if (id === undefined) ids.set(line, (id = ids.size))
      out[i] = id
    })
    return out
  }
  return { a: idsOf(a), b: idsOf(b) }
}

/**
 * Every path end the search made, in flat arrays: the old position after its snake, the end it
 * was extended from and how (one removed or one added line). At most (D+1)(D+2)/2 of them for an
 * edit length D, so the memory is bounded by the edit length, not by the texts.
 */
class Trace {
  oldPos = new Int32Array(16)
  prev = new Int32Array(16)
  kind = new Uint8Array(16)
  size = 0

  push(oldPos: number, prev: number, kind: Kind): number {
    if (this.size === this.oldPos.length) {
      const grow = <T extends Int32Array | Uint8Array>(from: T, to: T): T => (to.set(from), to)
      this.oldPos = grow(this.oldPos, new Int32Array(this.size * 2))
      this.prev = grow(this.prev, new Int32Array(this.size * 2))
      this.kind = grow(this.kind, new Uint8Array(this.size * 2))
    }
    this.oldPos[this.size] = oldPos
    this.prev[this.size] = prev
    this.kind[this.size] = kind
    return this.size++
  }
}

/** How long the search runs before it offers the caller a pause (a `yield`), in milliseconds. */
const SEARCH_SLICE_MS = 8

/** Where {@link search} found the end of the edit script: its trace, the end's entry and diagonal. */
interface Found {
  readonly trace: Trace
  readonly end: number
  readonly k: number
}

/**
 * The edit script from `a` to `b` as trace entry of its end (diagonal `k` = old − new position),
 * or `undefined` past the bounds. Diagonals that ran off either text are pruned, as jsdiff does.
 * It yields every {@link SEARCH_SLICE_MS}; `timeoutMs` counts only the time it ran, not its pauses.
 */
function* search(a: Int32Array, b: Int32Array, maxEditLength: number, timeoutMs: number): Generator<void, Found | undefined, void> {
  const oldLen = a.length
  const newLen = b.length
  const snake = (oldPos: number, k: number): number => {
    let newPos = oldPos - k
    while (newPos + 1 < newLen && oldPos + 1 < oldLen && a[oldPos + 1] === b[newPos + 1]) {
      oldPos++
      newPos++
    }
    return oldPos
  }
  const trace = new Trace()
  const maxD = Math.min(oldLen + newLen, maxEditLength)
  const offset = maxD + 1
  // The path end on each diagonal, -1 for none (jsdiff's `bestPath`, pruned the same way).
  const best = new Int32Array(2 * maxD + 3).fill(-1)
  best[offset] = trace.push(snake(-1, 0), -1, EQUAL)
  if (trace.oldPos[0]! + 1 >= oldLen && trace.oldPos[0]! + 1 >= newLen) return { trace, end: 0, k: 0 }
  let minK = -Infinity
  let maxK = Infinity
  let steps = 0
  // Time run so far, and when this run (since the last pause) began.
  let spent = 0
  let resumed = performance.now()
  const ran = (): number => spent + performance.now() - resumed
  for (let d = 1; d <= maxD && ran() <= timeoutMs; d++) {
    for (let k = Math.max(minK, -d); k <= Math.min(maxK, d); k += 2) {
      // jsdiff checks its deadline once per edit length; long snakes on many diagonals can make one slow.
      if (++steps % 64 === 0) {
        const now = performance.now()
        if (spent + now - resumed > timeoutMs) return undefined
        if (now - resumed >= SEARCH_SLICE_MS) {
          spent += now - resumed
          yield
          resumed = performance.now()
        }
      }
      const removeFrom = best[offset + k - 1]!
      const addFrom = best[offset + k + 1]!
      if (removeFrom >= 0) best[offset + k - 1] = -1
      const canAdd = addFrom >= 0 && trace.oldPos[addFrom]! - k < newLen
      const canRemove = removeFrom >= 0 && trace.oldPos[removeFrom]! + 1 < oldLen
      if (!canAdd && !canRemove) {
        best[offset + k] = -1
        continue
      }
      const add = !canRemove || (canAdd && trace.oldPos[removeFrom]! < trace.oldPos[addFrom]!)
      const start = add ? trace.oldPos[addFrom]! : trace.oldPos[removeFrom]! + 1
      const oldPos = snake(start, k)
      const entry = trace.push(oldPos, add ? addFrom : removeFrom, add ? ADDED : REMOVED)
      if (oldPos + 1 >= oldLen && oldPos - k + 1 >= newLen) return { trace, end: entry, k }
      best[offset + k] = entry
      if (oldPos + 1 >= oldLen) maxK = Math.min(maxK, k - 1)
      if (oldPos - k + 1 >= newLen) minK = Math.max(minK, k + 1)
    }
  }
  return undefined
}

/** The runs of the edit script `found` ends, read back along its trace. */
function runsOf(a: readonly string[], b: readonly string[], { trace, end, k: endK }: Found): Run[] {
  // Read backwards as ranges (in `b` for added lines, in `a` otherwise), joining neighbours of one kind.
  const ranges: { kind: Kind; from: number; to: number }[] = []
  const prepend = (kind: Kind, from: number, to: number): void => {
    const last = ranges.at(-1)
    if (from === to) return
    if (last?.kind === kind && last.from === to) last.from = from
    else ranges.push({ kind, from, to })
  }
  let entry = end
  let k = endK
  while (entry >= 0) {
    const oldEnd = trace.oldPos[entry]! + 1
    const kind = trace.kind[entry] as Kind
    const prev = trace.prev[entry]!
    if (kind === EQUAL) {
      prepend(EQUAL, 0, oldEnd)
      break
    }
    // The snake starts right after the one line this step removed or added.
    const snakeStart = trace.oldPos[prev]! + (kind === ADDED ? 1 : 2)
    prepend(EQUAL, snakeStart, oldEnd)
    if (kind === ADDED) prepend(ADDED, snakeStart - 1 - k, snakeStart - k)
    else prepend(REMOVED, snakeStart - 1, snakeStart)
    entry = prev
    k += kind === ADDED ? 1 : -1
  }
  return ranges.reverse().map(({ kind, from, to }) => ({ kind, lines: (kind === ADDED ? b : a).slice(from, to) }))
}

/** The runs as hunks with `context` lines around each change, joined as jsdiff's `structuredPatch` joins them. */
function hunksOf(runs: readonly Run[], context: number): LineHunk[] {
  const hunks: LineHunk[] = []
  let oldStart = 0
  let newStart = 0
  let lines: string[] = []
  let oldLine = 1
  let newLine = 1
  const all: Run[] = [...runs, { kind: EQUAL, lines: [] }]
  all.forEach((run, i) => {
    if (run.kind !== EQUAL) {
      if (oldStart === 0) {
        const before = context > 0 ? (all[i - 1]?.lines.slice(-context) ?? []) : []
        lines = before.map((line) => ` ${line}`)
        oldStart = oldLine - lines.length
        newStart = newLine - lines.length
      }
      const sign = run.kind === ADDED ? '+' : '-'
      for (const line of run.lines) lines.push(sign + line)
      if (run.kind === ADDED) newLine += run.lines.length
      else oldLine += run.lines.length
      return
    }
    if (oldStart !== 0) {
      if (run.lines.length <= context * 2 && i < all.length - 2) {
        for (const line of run.lines) lines.push(` ${line}`)
      } else {
        const shown = Math.min(run.lines.length, context)
        for (const line of run.lines.slice(0, shown)) lines.push(` ${line}`)
        hunks.push({ oldStart, oldLines: oldLine - oldStart + shown, newStart, newLines: newLine - newStart + shown, lines: withEofMarks(lines) })
        oldStart = 0
        newStart = 0
        lines = []
      }
    }
    oldLine += run.lines.length
    newLine += run.lines.length
  })
  return hunks
}

/** Each line without its `\n`; one that had none is followed by `\ No newline at end of file`. */
function withEofMarks(lines: readonly string[]): string[] {
  const out: string[] = []
  for (const line of lines) {
    if (line.charCodeAt(line.length - 1) === 10) out.push(line.slice(0, -1))
    else out.push(line, '\\ No newline at end of file')
  }
  return out
}

/**
 * The unified-diff hunks from `before` to `after`, given as lines each keeping its `\n` (the last
 * may lack one): the same hunks as jsdiff's `structuredPatch(…, { context, maxEditLength, timeout })`.
 * `undefined` when the shortest edit script is longer than `maxEditLength` lines or the search
 * passes `timeoutMs`: time and memory stay bounded by those, not by the texts' size.
 */
export function lineHunks(before: readonly string[], after: readonly string[], options: LineDiffOptions): LineHunk[] | undefined {
  const steps = lineHunkSteps(before, after, options)
  for (;;) {
    const step = steps.next()
    if (step.done === true) return step.value
  }
}

/**
 * {@link lineHunks} as resumable steps: it yields every few milliseconds of search, so a caller
 * may give the event loop a turn (the time limit counts only the search's own time). The hunks'
 * lines are taken from `shown` when given (the same lines, as they are to be shown: cut ones, say),
 * compared as `before` and `after` are.
 */
export function* lineHunkSteps(
  before: readonly string[],
  after: readonly string[],
  options: LineDiffOptions,
  shown: { readonly before: readonly string[]; readonly after: readonly string[] } = { before, after },
): Generator<void, LineHunk[] | undefined, void> {
  const ids = intern(before, after)
  const found = yield* search(ids.a, ids.b, options.maxEditLength, options.timeoutMs)
  if (found === undefined) return undefined
  return hunksOf(runsOf(shown.before, shown.after, found), options.context)
}

/**
 * Aborts at any moment: each operation of the contract, on a present and an absent target, with its
 * signal aborted at a drawn moment: before the call, after k promise turns or k event-loop turns of
 * it, or after it settled. The contract's common rules say what may come of it: `FS_ABORTED` with
 * nothing changed, `FS_ABORTED` flagged `indeterminate` (a mutation only) with the change made whole
 * or not at all, or, where the abort came too late to matter, what the call gives without one. The
 * call settles at once after the abort (a read at the abort, a mutation within `ABORT_GRACE_MS`),
 * and the store afterwards, read back through listings and reads, is the state before the call or
 * the state the unaborted call leaves: no residue, no half move, no change undone later.
 */
import fc from 'fast-check'
import { expect } from 'vitest'
import { isFsError, type FileSystem, type FsErrorCode, type FsTarget } from '@seamfs/core'
import { yieldToLoop, type Env, type Kit, type Needs } from '../kit.js'
import { everyCase, holds, runDirs } from './seeded.js'
import { collect } from './stream.js'

/** Core's grace for an aborted mutation's hook (`ABORT_GRACE_MS` in `@seamfs/core`'s abort-wait, not exported). */
const ABORT_GRACE_MS = 20

/** A run's directory holds four entries; the walk stops well past what any run makes. */
const STATE_MAX_DEPTH = 8
const STATE_MAX_ENTRIES = 64

/** When the signal is aborted, against the call. */
type When =
  | { readonly kind: 'before the call' }
  | { readonly kind: 'promise turns'; readonly k: number }
  | { readonly kind: 'event-loop turns'; readonly k: number }
  | { readonly kind: 'after it settled' }

const showWhen = (when: When): string =>
  when.kind === 'promise turns' || when.kind === 'event-loop turns' ? `after ${when.k} ${when.kind} of the call` : when.kind

/** What a call gave: the comparable part of its value, or its error's code and whether it is `indeterminate`. */
type Outcome = { readonly ok: unknown } | { readonly code: FsErrorCode; readonly indeterminate: boolean }

/** The store of a run's directory: each path below it, `/`-ended for a directory, with a file's bytes (hex) or the entry's type. */
type State = Readonly<Record<string, string>>

/** One operation of the contract, on the targets it takes (paths relative to the run's directory). */
interface AbortOp {
  readonly name: string
  readonly needs: Needs
  readonly mutation: boolean
  /** The paths of its targets, on a present or an absent one. */
  readonly paths: (present: boolean) => readonly string[]
  /** The call; resolves to the comparable part of its value (no versions: they differ from one directory to the next). */
  readonly call: (fs: FileSystem, targets: readonly FsTarget[], signal: AbortSignal | undefined) => Promise<unknown>
}

const hex = (bytes: Uint8Array): string => Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength).toString('hex')

const file = (present: boolean): readonly string[] => [present ? 'f.txt' : 'gone.txt']
const dir = (present: boolean): readonly string[] => [present ? 'sub' : 'gone']
const first = (targets: readonly FsTarget[]): FsTarget => targets[0] as FsTarget
const WRITES: Needs = { writes: true }

/** Every operation of the contract that takes a signal, gated as its own clause is. */
const OPS: readonly AbortOp[] = [
  { name: 'readText', needs: {}, mutation: false, paths: file, call: (fs, t, signal) => fs.readText(first(t), { signal }) },
  { name: 'readBytes', needs: {}, mutation: false, paths: file, call: async (fs, t, signal) => hex(await fs.readBytes(first(t), { signal })) },
  {
    name: 'streamText',
    needs: {},
    mutation: false,
    paths: file,
    call: async (fs, t, signal) => (await collect(await fs.streamText(first(t), { signal }))).join(''),
  },
  {
    name: 'streamBytes',
    needs: {},
    mutation: false,
    paths: file,
    call: async (fs, t, signal) => hex(Buffer.concat(await collect(await fs.streamBytes(first(t), { signal })))),
  },
  {
    name: 'openFile',
    needs: {},
    mutation: false,
    paths: file,
    call: async (fs, t, signal) => {
      const opened = await fs.openFile(first(t), { signal })
      try {
        return { type: opened.info.type, size: opened.info.size, bytes: hex(Buffer.concat(await collect(opened.chunks))) }
      } finally {
        await opened.close()
      }
    },
  },
  {
    name: 'listDir',
    needs: {},
    mutation: false,
    paths: dir,
    call: async (fs, t, signal) => (await fs.listDir(first(t), { signal })).map((e) => `${e.name} ${e.type}`),
  },
  {
    name: 'listTree',
    needs: {},
    mutation: false,
    paths: (present) => [present ? '.' : 'gone'],
    call: async (fs, t, signal) =>
      (await collect(await fs.listTree(first(t), { signal })))
        .flat()
        .map((e) => `${e.path} ${e.type}`)
        .sort(),
  },
  {
    name: 'stat',
    needs: {},
    mutation: false,
    paths: file,
    call: async (fs, t, signal) => {
      const info = await fs.stat(first(t), { signal })
      return info && { type: info.type, size: info.size }
    },
  },
  {
    name: 'writeText',
    needs: WRITES,
    mutation: true,
    paths: file,
    call: async (fs, t, signal) => (await fs.writeText(first(t), 'written by the test\n', { signal })).operation,
  },
  {
    name: 'writeBytes',
    needs: WRITES,
    mutation: true,
    paths: file,
    call: async (fs, t, signal) => (await fs.writeBytes(first(t), Uint8Array.of(0x62, 0x00, 0xff, 0x0a), { signal })).operation,
  },
  {
    name: 'editText',
    needs: WRITES,
    mutation: true,
    paths: file,
    call: async (fs, t, signal) => (await fs.editText(first(t), { oldString: 'two', newString: 'TWO', replaceAll: false }, { signal })).after,
  },
  {
    name: 'remove',
    needs: { writes: true, caps: ['remove'] },
    mutation: true,
    paths: file,
    call: async (fs, t, signal) => {
      const { type, entries } = await fs.remove(first(t), { signal })
      return { type, entries }
    },
  },
  {
    name: 'rename',
    needs: { writes: true, caps: ['rename'] },
    mutation: true,
    paths: (present) => [...file(present), 'moved.txt'],
    call: async (fs, [from, to], signal) => {
      const { type, replaced } = await fs.rename(from as FsTarget, to as FsTarget, { signal })
      return { type, replaced }
    },
  },
  {
    name: 'createDirectory',
    needs: { writes: true, caps: ['createDirectory'] },
    mutation: true,
    paths: (present) => [present ? 'sub' : 'made/deeper'],
    call: async (fs, t, signal) => (await fs.createDirectory(first(t), { signal })).created,
  },
]

/** What every run lays in its directory: a file and a directory with a file. */
async function lay(env: Env, at: string): Promise<void> {
  await env.write(`${at}/f.txt`, 'one two\n')
  await env.write(`${at}/sub/inner.txt`, 'inner\n')
}

/** The store below `at`, read back: every entry listed (directories too: an empty one is residue), every file's bytes. */
async function stateOf(env: Env, at: string): Promise<State> {
  const out: Record<string, string> = {}
  let entries = 0
  // Bounded as `snapshot` is: a listing that holds its own directory fails by name, never walks forever.
  const walk = async (rel: string, target: FsTarget, ancestors: ReadonlySet<string>): Promise<void> => {
    if (ancestors.has(target.targetKey)) throw new Error(`the listing of "${at}" reached "${rel}", whose targetKey is its own ancestor's`)
    if (ancestors.size >= STATE_MAX_DEPTH) throw new Error(`"${at}/${rel}" is nested more than ${STATE_MAX_DEPTH} directories deep`)
    const inside = new Set(ancestors).add(target.targetKey)
    for (const entry of await env.fs.listDir(target)) {
      if (++entries > STATE_MAX_ENTRIES) throw new Error(`more than ${STATE_MAX_ENTRIES} entries under "${at}"`)
      const path = rel === '' ? entry.name : `${rel}/${entry.name}`
      if (entry.type === 'directory') {
        out[`${path}/`] = 'directory'
        await walk(path, entry.target, inside)
      } else if (entry.type === 'file') out[path] = hex(await env.fs.readBytes(entry.target))
      else out[path] = entry.type
    }
  }
  await walk('', await env.resolve(at), new Set())
  return out
}

/** Raised when a call does not settle in time: never an outcome, always a failure. */
class Hang extends Error {}

/** `work`'s outcome; a raw error fails at once, and so does a call still unsettled `boundMs` after `from` (the abort). */
async function outcomeOf(work: Promise<Outcome>, boundMs: number, what: string): Promise<Outcome> {
  let timer: ReturnType<typeof setTimeout> | undefined
  const deadline = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Hang(`${what}: the call did not settle within ${boundMs} ms`)), boundMs)
  })
  try {
    return await Promise.race([work, deadline])
  } finally {
    clearTimeout(timer)
  }
}

/** The call's outcome, caught as soon as it is made (a rejection is never left unhandled while the test waits its turns). */
async function settle(call: () => Promise<unknown>): Promise<Outcome> {
  try {
    return { ok: await call() }
  } catch (err) {
    if (!isFsError(err)) {
      const shown = err instanceof Error ? `${err.name}: ${err.message}` : String(err)
      return { code: `a raw error escaped instead of an FsError: ${shown}` as FsErrorCode, indeterminate: false }
    }
    return { code: err.code, indeterminate: err.indeterminate }
  }
}

const showOutcome = (o: Outcome): string => ('ok' in o ? 'it succeeded' : `${o.code}${o.indeterminate ? ' (indeterminate)' : ''}`)

/** How the unaborted call ends on one target: its outcome and the state it leaves. */
interface Reference {
  readonly outcome: Outcome
  readonly after: State
}

const WHEN_ARB: fc.Arbitrary<When> = fc.oneof(
  fc.constant<When>({ kind: 'before the call' }),
  fc.integer({ min: 0, max: 12 }).map((k): When => ({ kind: 'promise turns', k })),
  fc.integer({ min: 1, max: 6 }).map((k): When => ({ kind: 'event-loop turns', k })),
  fc.constant<When>({ kind: 'after it settled' }),
)

/** The deterministic pass: each kind of moment, on a present and an absent target. */
const WHEN_CASES: readonly When[] = [
  { kind: 'before the call' },
  { kind: 'promise turns', k: 0 },
  { kind: 'promise turns', k: 3 },
  { kind: 'event-loop turns', k: 1 },
  { kind: 'event-loop turns', k: 3 },
  { kind: 'after it settled' },
]

/** The clause (see the file's TSDoc). */
export function abortClauses(kit: Kit): void {
  // How long a call may take to settle once aborted (or, aborted after it settled, to settle at all):
  // at once by the contract; the bound leaves room for a loaded machine and a remote store.
  const boundMs = Math.min(5_000, Math.max(1_000, Math.floor(kit.tuning.timeoutMs / 4)))
  // Random runs on top of the deterministic pass: a fifth of the generative runs (5 by default, 50 with --thorough).
  const runs = Math.max(3, Math.ceil(kit.tuning.generativeRuns / 5))
  kit.group('abort: at any moment', {}, () => {
    for (const op of OPS) {
      const title = `${op.name} aborted before the call, after k promise or event-loop turns, or after it settled, on a present and an absent target: FS_ABORTED${op.mutation ? ' (indeterminate: the change whole or not at all)' : ''} or what it gives unaborted, at once, and the store is as before or as after the unaborted call`
      kit.testIf(title, op.needs, async (env) => {
        const dirs = runDirs('x')
        const references = new Map<boolean, Reference>()
        const targetsIn = async (at: string, present: boolean): Promise<FsTarget[]> =>
          Promise.all(op.paths(present).map((p) => env.resolve(p === '.' ? at : `${at}/${p}`)))
        // A read changes nothing: its runs share one laid directory. A mutation's run lays its own.
        let shared: { readonly at: string; readonly state: State } | undefined
        const laid = async (): Promise<{ readonly at: string; readonly state: State }> => {
          if (shared !== undefined && !op.mutation) return shared
          const at = dirs()
          await lay(env, at)
          // Every layout is the same: the first one's state is the state before every run.
          shared = { at, state: shared?.state ?? (await stateOf(env, at)) }
          return shared
        }

        const reference = async (present: boolean): Promise<Reference> => {
          const known = references.get(present)
          if (known !== undefined) return known
          const { at } = await laid()
          const targets = await targetsIn(at, present)
          const outcome = await outcomeOf(
            settle(() => op.call(env.fs, targets, undefined)),
            boundMs,
            `${op.name} without a signal`,
          )
          const made = { outcome, after: await stateOf(env, at) }
          references.set(present, made)
          return made
        }

        const check = async ({ present, when }: { present: boolean; when: When }): Promise<void> => {
          const ref = await reference(present)
          const { at, state: before } = await laid()
          const targets = await targetsIn(at, present)
          const controller = new AbortController()
          const abort = (): void => controller.abort(new Error('aborted by the test'))
          const what = `${op.name} of ${present ? 'a present' : 'an absent'} target aborted ${showWhen(when)}`
          if (when.kind === 'before the call') abort()
          const settled = settle(() => op.call(env.fs, targets, controller.signal))
          if (when.kind === 'promise turns') for (let i = 0; i < when.k; i++) await Promise.resolve()
          else if (when.kind === 'event-loop turns') for (let i = 0; i < when.k; i++) await yieldToLoop()
          else if (when.kind === 'after it settled') await outcomeOf(settled, boundMs, what)
          abort()
          const outcome = await outcomeOf(settled, boundMs, what)
          // A change must not land (nor be undone) a few turns after the answer.
          for (let i = 0; i < 3; i++) await yieldToLoop()
          const after = await stateOf(env, at)
          const said = `${what}: ${showOutcome(outcome)} (unaborted: ${showOutcome(ref.outcome)})`
          if ('code' in outcome) expect(outcome.code, `${said}: only FsErrors escape`).not.toMatch(/^a raw error/)
          if (when.kind === 'before the call') {
            expect(outcome, `${said}: aborted before the call, it is FS_ABORTED, not indeterminate`).toEqual({ code: 'FS_ABORTED', indeterminate: false })
            expect(after, `${said}: the store changed`).toEqual(before)
            return
          }
          if (when.kind === 'after it settled' || 'ok' in outcome || outcome.code !== 'FS_ABORTED') {
            // The abort came too late (or not at all) for this call: it is what the unaborted call is.
            expect(outcome, `${said}: not FS_ABORTED, so what the unaborted call gives`).toEqual(ref.outcome)
            expect(after, `${said}: the store is not what the unaborted call leaves`).toEqual(ref.after)
            return
          }
          if (!outcome.indeterminate) {
            expect(after, `${said}: FS_ABORTED without indeterminate, yet the store changed`).toEqual(before)
            return
          }
          expect(op.mutation, `${said}: a read is never indeterminate`).toBe(true)
          // It may still land: whole or not at all, now and a moment later (past the hook's grace).
          for (let look = 0; look < 2; look++) {
            const seen = look === 0 ? after : await stateOf(env, at)
            expect([before, ref.after], `${said}: the store is neither as before nor as after the call`).toContainEqual(seen)
            if (look === 0) await new Promise((resolve) => setTimeout(resolve, 5 * ABORT_GRACE_MS))
          }
        }

        const cases = [true, false].flatMap((present) => WHEN_CASES.map((when) => ({ present, when })))
        await everyCase(cases, (c) => `${c.present ? 'a present' : 'an absent'} target aborted ${showWhen(c.when)}`, check)
        await holds(kit, title, fc.record({ present: fc.boolean(), when: WHEN_ARB }), check, runs)
      })
    }
  })
}

import { expect } from 'vitest'
import { isFsError, type FsEditOutcome, type FsTarget } from '@seamfs/core'
import { yieldToLoop, type Env, type Kit } from '../kit.js'
import { firstDifference, sizeLabel, sizedText } from './fixtures.js'

const KIB = 1024
const MIB = 1024 * KIB

/**
 * Bytes each extra size of the atomicity test writes in all (big contents get fewer writes,
 * at least 4; small ones at most a quarter of the main test's).
 */
const ATOMICITY_BUDGET_BYTES = 16 * MIB

/**
 * A writer alternating two contents of `size` bytes while a reader reads continuously;
 * returns what the reader saw that was neither. The reader yields to the event loop every
 * turn: against a backend whose reads settle in microtasks, a reader that did not would
 * starve the writer's I/O and every timer, the test timeout included. The writer's loop
 * ends after `writes` writes whatever they await. Both stop at `deadline`.
 */
async function tornReads(env: Env, size: number, writes: number, deadline: number): Promise<{ torn: string[]; reads: number; last: string }> {
  // One repeated letter each (cheap to encode and compare at megabytes): any mix of the two is neither.
  const a = filled(size, 'A')
  const b = filled(size + 1, 'b')
  const t = await env.resolve('atomic.txt')
  await env.fs.writeText(t, a)
  let writing = true
  let last = a
  let reads = 0
  const torn: string[] = []
  const writer = (async () => {
    try {
      for (let i = 0; i < writes && torn.length === 0 && Date.now() < deadline; i++) {
        last = i % 2 === 0 ? b : a
        await env.fs.writeText(t, last)
      }
    } finally {
      writing = false
    }
  })()
  const reader = (async () => {
    while (writing && torn.length === 0 && reads < writes * 1000 && Date.now() < deadline) {
      const seen = await env.fs.readText(t)
      reads++
      if (seen !== a && seen !== b) {
        const near = seen.length === a.length ? a : b
        torn.push(`a read of ${seen.length} characters, departing from a whole content at character ${firstDifference(seen, near)}`)
      }
      await yieldToLoop()
    }
  })()
  await Promise.all([writer, reader])
  return { torn, reads, last }
}

/** `bytes` bytes of `letter`, ending in a line break and a 3-byte character. */
function filled(bytes: number, letter: string): string {
  return letter.repeat(bytes - 4) + '\n中'
}

/** One run of a guarded write or edit aborted at `when`, after it started. */
type AbortPoint = 'synchronously' | 'after a microtask' | 'after a macrotask' | 'after 1 ms'

async function abortAt(when: AbortPoint, controller: AbortController): Promise<void> {
  if (when === 'after a microtask') await Promise.resolve()
  else if (when === 'after a macrotask') await yieldToLoop()
  else if (when === 'after 1 ms') await new Promise((resolve) => setTimeout(resolve, 1))
  controller.abort(new Error('aborted by the test'))
}

export function writeRaceClauses(kit: Kit): void {
  const timeoutMs = kit.tuning.timeoutMs * 2
  // The loops stop well before the test timeout, so a slow store fails on its own terms.
  const loopBudgetMs = kit.tuning.timeoutMs

  kit.group('atomicity', { writes: true }, () => {
    kit.test(
      'a reader that reads continuously only ever sees one of two contents, whole',
      async (env) => {
        const { torn, reads, last } = await tornReads(env, kit.tuning.atomicityBytes, kit.tuning.atomicityWrites, Date.now() + loopBudgetMs)
        expect(torn[0], 'a reader saw neither content whole').toBeUndefined()
        expect(reads).toBeGreaterThan(0)
        expect(await env.read('atomic.txt')).toBe(last)
      },
      timeoutMs,
    )

    for (const size of [64 * KIB + 1, 5 * MIB + 1]) {
      kit.test(
        `a reader that reads continuously only ever sees one of two contents, whole, at ${sizeLabel(size)}`,
        async (env) => {
          const writes = Math.max(4, Math.min(Math.ceil(kit.tuning.atomicityWrites / 4), Math.floor(ATOMICITY_BUDGET_BYTES / size)))
          const { torn, reads, last } = await tornReads(env, size, writes, Date.now() + loopBudgetMs)
          expect(torn[0], 'a reader saw neither content whole').toBeUndefined()
          expect(reads).toBeGreaterThan(0)
          expect(await env.read('atomic.txt')).toBe(last)
        },
        timeoutMs,
      )
    }
  })

  kit.group('write: in flight', { writes: true }, () => {
    kit.test(
      'staging residue of in-flight writes is never listed, only the final names',
      async (env) => {
        await env.write('keep.txt', 'k')
        const allowed = new Set(['keep.txt', 'big.txt', 'sub'])
        const content = [sizedText(kit.tuning.atomicityBytes, 'x'), sizedText(kit.tuning.atomicityBytes + 1, 'y')]
        const deadline = Date.now() + loopBudgetMs
        const unexpected = new Set<string>()
        let writing = true
        let listings = 0
        const writer = (async () => {
          try {
            for (let i = 0; i < 5 && Date.now() < deadline; i++) await env.write('big.txt', content[i % 2] as string)
            await env.write('sub/new.txt', content[0] as string)
          } finally {
            writing = false
          }
        })()
        const lister = (async () => {
          while (writing && listings < 10_000 && Date.now() < deadline) {
            const names = await env.names()
            for (const name of names) if (!allowed.has(name)) unexpected.add(name)
            if (names.includes('sub')) for (const name of await env.names('sub')) if (name !== 'new.txt') unexpected.add(`sub/${name}`)
            listings++
            await yieldToLoop()
          }
        })()
        await Promise.all([writer, lister])
        expect([...unexpected], 'names listed while writes were in flight').toEqual([])
        expect(listings).toBeGreaterThan(0)
        expect(await env.names()).toEqual(['big.txt', 'keep.txt', 'sub'])
        expect(await env.names('sub')).toEqual(['new.txt'])
      },
      timeoutMs,
    )

    kit.test(
      'a guarded write or edit aborted in flight either completes or changes nothing',
      async (env) => {
        const points: readonly AbortPoint[] = ['synchronously', 'after a microtask', 'after a macrotask', 'after 1 ms']
        const old = sizedText(64 * KIB + 1, 'old')
        const next = sizedText(64 * KIB + 1, 'new')
        for (const [i, when] of points.entries()) {
          const t = await env.resolve(`replace-${i}.txt`)
          const { version } = await env.fs.writeText(t, old)
          const replace = new AbortController()
          const replacing = outcomeOf(env.fs.writeText(t, next, { signal: replace.signal, expected: { kind: 'replaceIfVersion', version } }))
          await abortAt(when, replace)
          await expectAllOrNothing(env, t, await replacing, { old, next, version }, `replaceIfVersion aborted ${when}`)

          const c = await env.resolve(`create-${i}.txt`)
          const create = new AbortController()
          const creating = outcomeOf(env.fs.writeText(c, next, { signal: create.signal, expected: { kind: 'createIfAbsent' } }))
          await abortAt(when, create)
          await expectAllOrNothing(env, c, await creating, { old: undefined, next, version: undefined }, `createIfAbsent aborted ${when}`)

          const e = await env.resolve(`edit-${i}.txt`)
          const edited = await env.fs.writeText(e, old)
          const edit = new AbortController()
          const request = { oldString: 'old0 ', newString: 'new0 ', replaceAll: false }
          const editing = outcomeOf(env.fs.editText(e, request, { signal: edit.signal, expected: { version: edited.version } }))
          await abortAt(when, edit)
          const after = old.replace('old0 ', 'new0 ')
          await expectAllOrNothing(env, e, await editing, { old, next: after, version: edited.version }, `guarded edit aborted ${when}`)
        }
      },
      timeoutMs,
    )
  })

  kit.group('edit: critical section', { writes: true }, () => {
    kit.test('concurrent unguarded edits of different parts of one file all land', async (env) => {
      const n = 8
      const markers = Array.from({ length: n }, (_, i) => `<marker ${i}>`)
      const initial = markers.map((m, i) => `line ${i} ${m} end\n`).join('')
      await env.write('shared.txt', initial)
      const t = await env.resolve('shared.txt')
      const settled = await Promise.allSettled(markers.map((m, i) => env.fs.editText(t, { oldString: m, newString: `<edited ${i}>`, replaceAll: false })))
      const outcomes: FsEditOutcome[] = []
      const failures: string[] = []
      for (const s of settled) {
        if (s.status === 'fulfilled') outcomes.push(s.value)
        else failures.push(isFsError(s.reason) ? `${s.reason.code}: ${s.reason.message}` : `a raw error: ${String(s.reason)}`)
      }
      expect(failures.join('\n'), 'an unguarded edit failed: edits of one file wait for each other, they never fail for it').toBe('')
      const final = markers.map((_, i) => `line ${i} <edited ${i}> end\n`).join('')
      expect(await env.read('shared.txt')).toBe(final)
      // The edits ran one after another: each started from the initial text or another's result.
      const results = new Set([initial, ...outcomes.map((o) => o.after)])
      expect(results.size).toBe(n + 1)
      for (const o of outcomes) expect(results.has(o.before)).toBe(true)
      expect(outcomes.filter((o) => o.before === initial)).toHaveLength(1)
      expect(outcomes.filter((o) => o.after === final)).toHaveLength(1)
    })
  })
}

/**
 * How an operation aborted mid-flight ended: `ok`, its error code, or `indeterminate` for an
 * `FS_ABORTED` flagged `indeterminate` (the store had not answered when the abort came,
 * so the mutation may still land).
 */
async function outcomeOf(operation: Promise<unknown>): Promise<string> {
  try {
    await operation
    return 'ok'
  } catch (err) {
    if (!isFsError(err)) return `not an FsError: ${String(err)}`
    return err.code === 'FS_ABORTED' && err.indeterminate ? 'indeterminate' : err.code
  }
}

/**
 * After an operation was aborted mid-flight: FS_ABORTED with nothing changed, or success with
 * everything changed; an indeterminate FS_ABORTED leaves the old content or the new, whole, and
 * whichever it is a moment later too (never a mix, never a third thing).
 */
async function expectAllOrNothing(
  env: Env,
  t: FsTarget,
  code: string,
  was: { readonly old: string | undefined; readonly next: string; readonly version: string | undefined },
  what: string,
): Promise<void> {
  expect(['ok', 'FS_ABORTED', 'indeterminate'], `${what}: the code`).toContain(code)
  const info = await env.fs.stat(t)
  const text = info === undefined ? undefined : await env.fs.readText(t)
  if (code === 'FS_ABORTED') {
    expect(info?.version, `${what}: FS_ABORTED, yet the version changed`).toBe(was.version)
    expect(text === was.old, `${what}: FS_ABORTED, yet the content changed`).toBe(true)
  } else if (code === 'indeterminate') {
    for (let look = 0; look < 2; look++) {
      const seen = look === 0 ? text : (await env.fs.stat(t)) === undefined ? undefined : await env.fs.readText(t)
      expect(seen === was.old || seen === was.next, `${what}: indeterminate, yet the content is neither the old nor the new`).toBe(true)
      if (look === 0) await new Promise((resolve) => setTimeout(resolve, 100))
    }
  } else {
    expect(text === was.next, `${what}: it succeeded, yet the content is not the new one`).toBe(true)
  }
}

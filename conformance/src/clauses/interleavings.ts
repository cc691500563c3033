import { expect } from 'vitest'
import { isFsError } from '@seamfs/core'
import { yieldToLoop, type Env, type Kit } from '../kit.js'

// The finer timing adversary. The other race clauses look at the store between macrotasks: a
// backend that changes it in several steps settled in microtasks (a delete, then the put, in one
// turn of the loop) can keep a window no such observer ever lands in. Here an observer is started
// at every promise turn, from before the operation starts until it ends: each one's own calls then
// reach the store at a different turn of the operation's, across all of them.

/** Observers started before the operation: each takes tens of turns to reach the store itself. */
const LEAD = 64
/** How many promise turns each operation is swept over: a backend's hooks take tens, core adds its own. */
const TURNS = 64
/** Then, while it still runs (a store's I/O), probes one macrotask apart, at most this many. */
const LATER_PROBES = 32
/** Operations swept per test. */
const ROUNDS = 6

/**
 * Starts `probe` once per promise turn, `LEAD` times, then `operation`, then `probe` once per
 * promise turn while it runs (`TURNS` times at most: the probes' own steps land between the
 * operation's at every offset), then once per macrotask while it still runs (`LATER_PROBES` at
 * most). Returns the operation's outcome (or error) with each probe's.
 */
async function sweep<T, P>(
  operation: () => Promise<T>,
  probe: () => Promise<P>,
): Promise<{ outcome: PromiseSettledResult<T>; seen: PromiseSettledResult<P>[] }> {
  // A store with real I/O settles nothing in promise turns: a few probes there, the macrotask ones do the work.
  const fine = await settlesInTurns(probe)
  const probes: Promise<P>[] = []
  for (let turn = 0; turn < (fine ? LEAD : 4); turn++) {
    probes.push(probe())
    await Promise.resolve()
  }
  let done = false
  const running = operation().finally(() => {
    done = true
  })
  for (let turn = 0; turn < (fine ? TURNS : 8) && !done; turn++) {
    probes.push(probe())
    await Promise.resolve()
  }
  for (let later = 0; later < LATER_PROBES && !done; later++) {
    await yieldToLoop()
    probes.push(probe())
  }
  const [outcome] = await Promise.allSettled([running])
  return { outcome: outcome as PromiseSettledResult<T>, seen: await Promise.allSettled(probes) }
}

/** Whether `probe` settles within promise turns (a store without I/O), with no turn of the event loop. */
async function settlesInTurns(probe: () => Promise<unknown>): Promise<boolean> {
  let turned = false
  const timer = setImmediate(() => {
    turned = true
  })
  await probe()
  clearImmediate(timer)
  return !turned
}

/** The text at `path`, or `undefined` where there is no file; any other failure is thrown. */
async function readOrNone(env: Env, path: string): Promise<string | undefined> {
  try {
    return await env.fs.readText(await env.fs.resolve(path))
  } catch (err) {
    if (isFsError(err) && err.code === 'FS_NOT_FOUND') return undefined
    throw err
  }
}

/**
 * Both names read at once, `from` first, and whether the two looks fell in one turn of the loop.
 * Then, on a store that settles in promise turns, they see one moment: the two reads take the
 * same steps, `from`'s each one ahead. On a store with real I/O the two reads race each other, and
 * `to` may be looked at before `from`: finding neither then proves nothing (the rename clause's
 * poller, which reads one after the other, covers those stores).
 */
async function bothNames(env: Env, from: string, to: string): Promise<[string | undefined, string | undefined, boolean]> {
  let turned = false
  const timer = setImmediate(() => {
    turned = true
  })
  const [x, y] = await Promise.all([readOrNone(env, from), readOrNone(env, to)])
  clearImmediate(timer)
  return [x, y, !turned]
}

/** Every path `listTree` gives below `dir`, sorted, joined. */
async function treePaths(env: Env, dir: string): Promise<string> {
  const paths: string[] = []
  for await (const page of await env.fs.listTree(await env.fs.resolve(dir))) for (const entry of page) paths.push(entry.path)
  return paths.sort().join(', ')
}

/** What each rejected probe said, for the failure message. */
const failures = (seen: readonly PromiseSettledResult<unknown>[]): string[] =>
  seen.flatMap((s) => (s.status === 'rejected' ? [s.reason instanceof Error ? s.reason.message : String(s.reason)] : []))

/** Reads, listings and moves observed at every promise turn of the operation they race. */
export function interleavingClauses(kit: Kit): void {
  kit.group('interleavings', { writes: true }, () => {
    kit.test(
      `a read or a listing started at any promise turn of a write sees the old content or the new, whole, and no other name (${ROUNDS} writes × up to ${TURNS} turns)`,
      async (env) => {
        const contents = Array.from({ length: ROUNDS + 1 }, (_, i) => `${String.fromCharCode(97 + i)}\n`.repeat(200 + i))
        const t = await env.resolve('d/w.txt')
        await env.fs.writeText(t, contents[0]!)
        const dir = await env.resolve('d')
        const problems: string[] = []
        for (let round = 1; round <= ROUNDS && problems.length === 0; round++) {
          const [before, after] = [contents[round - 1]!, contents[round]!]
          const { outcome, seen } = await sweep(
            () => env.fs.writeText(t, after),
            () => Promise.all([env.fs.readText(t), env.fs.listDir(dir).then((entries) => entries.map((e) => e.name).join(', ')), treePaths(env, 'd')]),
          )
          if (outcome.status === 'rejected') throw outcome.reason
          problems.push(...failures(seen).map((m) => `round ${round}: a read or listing failed: ${m}`))
          for (const s of seen) {
            if (s.status !== 'fulfilled') continue
            const [text, names, tree] = s.value
            if (text !== before && text !== after) problems.push(`round ${round}: a read of ${text.length} characters, neither content`)
            if (names !== 'w.txt') problems.push(`round ${round}: the listing showed ${JSON.stringify(names)}, not only w.txt`)
            if (tree !== 'w.txt') problems.push(`round ${round}: the tree listing showed ${JSON.stringify(tree)}, not only w.txt`)
          }
        }
        expect(problems.slice(0, 5)).toEqual([])
      },
    )

    kit.test(
      `a tree listing started at any promise turn of a recursive remove below it leaves out what is gone, never fails (${ROUNDS} removes × up to ${TURNS} turns)`,
      async (env) => {
        if (kit.unmet({ caps: ['remove'] }) !== undefined) return
        const problems: string[] = []
        for (let round = 0; round < ROUNDS && problems.length === 0; round++) {
          const top = `lt${round}`
          for (const path of ['keep.txt', 'a/x.txt', 'a/b/y.txt', 'a/b/c/z.txt', 'a/b/c/d/w.txt']) await env.write(`${top}/${path}`, path)
          const whole = (await treePaths(env, top)).split(', ')
          const gone = await env.resolve(`${top}/a/b`)
          const { outcome, seen } = await sweep(
            () => env.fs.remove(gone, { recursive: true }),
            () => treePaths(env, top),
          )
          if (outcome.status === 'rejected') throw outcome.reason
          problems.push(...failures(seen).map((m) => `round ${round}: a tree listing failed: ${m}`))
          // Whatever a listing saw is the tree before the remove with part of a/b left out; keep.txt and a/x.txt are always there.
          for (const s of seen) {
            if (s.status !== 'fulfilled') continue
            const paths = s.value.split(', ')
            if (paths.some((p) => !whole.includes(p)) || !paths.includes('keep.txt') || !paths.includes('a/x.txt'))
              problems.push(`round ${round}: a tree listing gave ${s.value}`)
          }
          expect(await treePaths(env, top)).toBe('a, a/x.txt, keep.txt')
        }
        expect(problems.slice(0, 5)).toEqual([])
      },
    )

    kit.test(`an edit observed at any promise turn: the old content or the edited one, whole (${ROUNDS} edits × up to ${TURNS} turns)`, async (env) => {
      const t = await env.resolve('e.txt')
      let current = Array.from({ length: 300 }, (_, i) => `line <${i}>\n`).join('')
      await env.fs.writeText(t, current)
      const problems: string[] = []
      for (let round = 1; round <= ROUNDS && problems.length === 0; round++) {
        const next = current.replace(`<${round * 40}>`, `<edited ${round}>`)
        const { outcome, seen } = await sweep(
          () => env.fs.editText(t, { oldString: `<${round * 40}>`, newString: `<edited ${round}>`, replaceAll: false }),
          () => env.fs.readText(t),
        )
        if (outcome.status === 'rejected') throw outcome.reason
        problems.push(...failures(seen))
        for (const s of seen)
          if (s.status === 'fulfilled' && s.value !== current && s.value !== next) problems.push(`round ${round}: a read of neither content`)
        current = await env.fs.readText(t)
        if (current !== next) problems.push(`round ${round}: the file after the edit is not what it returned`)
      }
      expect(problems.slice(0, 5)).toEqual([])
    })

    kit.test(
      `a look at both names at any promise turn of a move finds the file, whole, at one of them at least (${ROUNDS} moves × up to ${TURNS} turns)`,
      async (env) => {
        if (kit.unmet({ caps: ['rename'] }) !== undefined) return
        const problems: string[] = []
        for (let round = 0; round < ROUNDS && problems.length === 0; round++) {
          const content = `move ${round}\n`.repeat(400)
          const [from, to] = [`m${round}.txt`, `n${round}.txt`]
          await env.write(from, content)
          const [a, b] = [await env.resolve(from), await env.resolve(to)]
          const { outcome, seen } = await sweep(
            () => env.fs.rename(a, b),
            () => bothNames(env, from, to),
          )
          if (outcome.status === 'rejected') throw outcome.reason
          problems.push(...failures(seen))
          for (const s of seen) {
            if (s.status !== 'fulfilled') continue
            const [x, y, together] = s.value
            if (x === undefined && y === undefined && together) problems.push(`round ${round}: neither name held the file`)
            for (const text of [x, y]) if (text !== undefined && text !== content) problems.push(`round ${round}: a read of ${text.length} characters`)
          }
          expect([await readOrNone(env, from), await readOrNone(env, to)]).toEqual([undefined, content])
        }
        expect(problems.slice(0, 5)).toEqual([])
      },
    )

    kit.test(`unguarded edits of one file started at every promise turn all land: none is lost (${ROUNDS} rounds of 12)`, async (env) => {
      const t = await env.resolve('many.txt')
      for (let round = 1; round <= ROUNDS; round++) {
        await env.fs.writeText(t, Array.from({ length: 12 }, (_, i) => `<${round}.${i}>\n`).join(''))
        const edits: Promise<unknown>[] = []
        for (let turn = 0; turn < 12; turn++) {
          edits.push(env.fs.editText(t, { oldString: `<${round}.${turn}>`, newString: `[${round}.${turn}]`, replaceAll: false }))
          for (let i = 0; i < turn; i++) await Promise.resolve()
        }
        for (const s of await Promise.allSettled(edits)) if (s.status === 'rejected') throw s.reason
        expect(await env.fs.readText(t), `round ${round}: every edit's change is there`).toBe(
          Array.from({ length: 12 }, (_, i) => `[${round}.${i}]\n`).join(''),
        )
      }
    })

    kit.test(`guarded writers started at every promise turn: exactly one per version wins (${ROUNDS} rounds)`, async (env) => {
      const t = await env.resolve('cas.txt')
      let version = (await env.fs.writeText(t, 'v0')).version
      for (let round = 1; round <= ROUNDS; round++) {
        const attempts: Promise<unknown>[] = []
        for (let turn = 0; turn < 12; turn++) {
          attempts.push(env.fs.writeText(t, `v${round} by ${turn}`, { expected: { kind: 'replaceIfVersion', version } }))
          for (let i = 0; i < turn; i++) await Promise.resolve()
        }
        const settled = await Promise.allSettled(attempts)
        const won = settled.flatMap((s, turn) => (s.status === 'fulfilled' ? [turn] : []))
        for (const s of settled) if (s.status === 'rejected' && !(isFsError(s.reason) && s.reason.code === 'FS_STALE_VERSION')) throw s.reason
        expect(won, `round ${round}: the writers that won from one version`).toHaveLength(1)
        expect(await env.fs.readText(t)).toBe(`v${round} by ${won[0]}`)
        version = (await env.fs.stat(t))?.version ?? version
      }
    })
  })
}

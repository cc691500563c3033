import { expect } from 'vitest'
import { isFsError, type FsWriteIntent } from '@seamfs/core'
import { yieldToLoop, type Env, type Kit } from '../kit.js'

// Capability claims probed, not trusted: a guard the backend calls `atomic` is raced by a writer
// that knows nothing of seamfs (the external hook), where a lock among seamfs callers does not help.

/** Races per guard kind: the outside write lands at a different moment of the guarded one each time. */
const RACES = 24

/** Waits `k` steps: promise turns first, then turns of the event loop (where a store's I/O lands). */
async function after(k: number): Promise<void> {
  for (let i = 0; i < Math.min(k, 8); i++) await Promise.resolve()
  for (let i = 8; i < k; i++) await yieldToLoop()
}

/**
 * A guarded write of `ours` and an outside write of `theirs` to one path, the outside one started
 * `k` steps later. Both always end; the outside one is unconditional. So a guarded write that
 * succeeded and left its own content must have come after the outside one: its guard (absent, or
 * the version before) was already false, and it overwrote a writer it never saw.
 */
async function race(env: Env, path: string, expected: FsWriteIntent, k: number): Promise<string | undefined> {
  const target = await env.resolve(path)
  const ours = `ours ${k}`
  const theirs = `theirs ${k}`
  const guarded = env.fs.writeText(target, ours, { expected }).then(
    () => true,
    (err: unknown) => {
      if (isFsError(err) && (err.code === 'FS_STALE_VERSION' || err.code === 'FS_NOT_OBSERVED')) return false
      throw err
    },
  )
  await after(k)
  await env.writeBytes(path, theirs)
  const won = await guarded
  const final = await env.fs.readText(target)
  if (won && final === ours) return `${expected.kind} at step ${k}: the guarded write succeeded over an outside write it never saw`
  if (final !== ours && final !== theirs) return `${expected.kind} at step ${k}: the file holds neither write (${JSON.stringify(final)})`
  return undefined
}

/** Declared capabilities, each probed with the race or the observation that would expose a false claim. */
export function capabilityClauses(kit: Kit): void {
  const atomic = (['createIfAbsent', 'replaceIfVersion'] as const).filter((guard) => kit.caps[guard] === 'atomic')
  const reason = atomic.length === 0 ? 'no guard is declared atomic' : kit.unmet({ writes: true, hooks: ['writeBytes'] })
  kit.groupIf('capabilities: atomic guards', reason, () => {
    kit.test(
      `a guard declared atomic holds against a writer that is not seamfs, whenever it lands (${atomic.join(', ')}; ${RACES} races each)`,
      async (env) => {
        const problems: string[] = []
        for (let k = 0; k < RACES; k++) {
          if (atomic.includes('createIfAbsent')) {
            const problem = await race(env, `c/${k}.txt`, { kind: 'createIfAbsent' }, k)
            if (problem !== undefined) problems.push(problem)
          }
          if (atomic.includes('replaceIfVersion')) {
            const { version } = await env.fs.writeText(await env.resolve(`r/${k}.txt`), 'before')
            const problem = await race(env, `r/${k}.txt`, { kind: 'replaceIfVersion', version }, k)
            if (problem !== undefined) problems.push(problem)
          }
        }
        expect(problems).toEqual([])
      },
    )
  })
}

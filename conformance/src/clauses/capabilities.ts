import { expect } from 'vitest'
import { isFsError, type FileSystem, type FsTarget, type FsWriteIntent } from '@seamfs/core'
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
  keyBoundClause(kit)
}

/** Every read of `target` the claim covers, each run to its end (a stream drained, an open file's chunks read). */
function readsOf(fs: FileSystem, target: FsTarget): [string, () => Promise<unknown>][] {
  const drain = async (chunks: AsyncIterable<unknown> | Iterable<unknown>): Promise<unknown[]> => {
    const all: unknown[] = []
    for await (const chunk of chunks) all.push(chunk)
    return all
  }
  return [
    ['readText', () => fs.readText(target)],
    ['readBytes', () => fs.readBytes(target).then((bytes) => new TextDecoder().decode(bytes))],
    [
      'openFile',
      async () => {
        const file = await fs.openFile(target)
        try {
          return await drain(file.chunks)
        } finally {
          await file.close()
        }
      },
    ],
    ['streamBytes', async () => drain(await fs.streamBytes(target))],
    ['streamText', async () => drain(await fs.streamText(target))],
  ]
}

/**
 * `capabilities.keyBoundReads`, probed: targets resolved, then a directory on one's way and another
 * one's entry itself replaced by links to a place holding other content. Every read of the old targets
 * must fail, where a path-string read would follow the links; resolved
 * afresh, the paths do lead through them (the control).
 */
function keyBoundClause(kit: Kit): void {
  const reason =
    kit.caps.keyBoundReads !== true ? 'capabilities.keyBoundReads is not declared' : kit.unmet({ writes: true, caps: ['remove'], hooks: ['symlink'] })
  kit.groupIf('capabilities: key-bound reads', reason, () => {
    kit.test('a read of a target whose way or entry became a link since resolve fails, never reading where the link leads', async (env) => {
      await env.write('kb/d/f.txt', 'original')
      await env.write('kb/leaf.txt', 'leaf')
      await env.write('kb/e/f.txt', 'elsewhere')
      await env.write('kb/e/g.txt', 'second')
      const file = await env.resolve('kb/d/f.txt')
      const dir = await env.resolve('kb/d')
      const leaf = await env.resolve('kb/leaf.txt')
      await env.fs.remove(dir, { recursive: true })
      await env.symlink('kb/d', 'e')
      await env.fs.remove(leaf)
      await env.symlink('kb/leaf.txt', 'e/f.txt')
      // The control: resolved afresh, both paths lead through the links.
      expect(await env.read('kb/d/f.txt')).toBe('elsewhere')
      expect(await env.read('kb/leaf.txt')).toBe('elsewhere')
      const problems: string[] = []
      const probe = async (what: string, op: string, run: () => Promise<unknown>): Promise<void> => {
        try {
          problems.push(`${op} of a target whose ${what} became a link answered ${JSON.stringify(await run())}`)
        } catch (err) {
          if (!isFsError(err)) problems.push(`${op} of a target whose ${what} became a link threw a raw error: ${String(err)}`)
        }
      }
      for (const [what, target] of [
        ['directory on its way', file],
        ['entry itself', leaf],
      ] as const) {
        for (const [op, run] of readsOf(env.fs, target)) await probe(what, op, run)
      }
      await probe('entry itself', 'listDir', () => env.fs.listDir(dir).then((entries) => entries.map((e) => e.name)))
      expect(problems).toEqual([])
    })
  })
}

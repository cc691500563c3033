/**
 * The seeded-property helpers of the drawn clauses (generative, arguments, aborts at any moment):
 * a property run with the kit's seed that names its smallest counterexample and a replay line, a
 * deterministic pass over a finite class list, and a directory per run.
 */
import fc from 'fast-check'
import type { Kit } from '../kit.js'

/** Where a failing property is replayed from: `SEAMFS_GEN_SEED`, `SEAMFS_GEN_PATH` (the failure's own line says both). */
export const REPLAY_SEED = 'SEAMFS_GEN_SEED'
export const REPLAY_PATH = 'SEAMFS_GEN_PATH'

/**
 * Runs `property` with the kit's seed (or a replay's), `runs` times (default `generativeRuns`),
 * throwing the shrunk counterexample with a replay line.
 */
export async function holds<T>(
  kit: Kit,
  title: string,
  arbitrary: fc.Arbitrary<T>,
  body: (value: T) => Promise<void>,
  runs = kit.tuning.generativeRuns,
): Promise<void> {
  const seed = Number(process.env[REPLAY_SEED] ?? kit.tuning.modelSeed)
  const path = process.env[REPLAY_PATH]
  const details = await fc.check(
    fc.asyncProperty(arbitrary, async (value) => {
      await body(value)
    }),
    { numRuns: runs, seed, ...(path === undefined ? {} : { path }), endOnFailure: path !== undefined },
  )
  if (!details.failed) return
  const error = details.errorInstance
  throw new Error(
    `failed after ${details.numRuns} runs on: ${fc.stringify(details.counterexample)}\n` +
      `${error instanceof Error ? error.message : String(error)}\n` +
      `Replay: ${REPLAY_SEED}=${details.seed} ${REPLAY_PATH}=${String(details.counterexamplePath)} (with the same tuning) -t "${title}"`,
    { cause: error },
  )
}

/**
 * Runs `body` on every case of a finite class list first (so each class is met, whatever the run
 * count), naming the case that fails; the random runs then combine classes.
 */
export async function everyCase<T>(cases: readonly T[], show: (c: T) => string, body: (c: T) => Promise<void>): Promise<void> {
  for (const c of cases) {
    try {
      await body(c)
    } catch (err) {
      throw new Error(`failed on ${show(c)}: ${err instanceof Error ? err.message : String(err)}`, { cause: err })
    }
  }
}

/** A directory of its own for each run of a property, so runs need no fresh subject. */
export function runDirs(prefix: string): () => string {
  let n = 0
  return () => `${prefix}${n++}`
}

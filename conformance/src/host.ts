import type { Reporter, TestCase, TestModule, TestSuite } from 'vitest/node'
import { bareTitle, failureNote, placeOf, SKIP_NOTE, type Reported } from './report.js'

/** What the supervisor sends the host: where to run vitest, on which entry file, with which per-test timeout. */
export type HostJob = { readonly root: string; readonly dir: string; readonly file: string; readonly timeoutMs: number }
/** What the host sends back: each result as it comes, then the run's errors. */
export type HostMessage = { readonly type: 'result'; readonly test: Reported } | { readonly type: 'done'; readonly errors: readonly string[] }

/** Vitest's own timeout sits this much past the kit's, so the kit's clearer message wins. */
const TIMEOUT_MARGIN_MS = 1_000

function reportOf(test: TestCase): Reported {
  const path: string[] = []
  for (let parent: TestSuite | TestModule = test.parent; parent.type === 'suite'; parent = parent.parent) path.unshift(parent.name)
  const { suite, clause } = placeOf(path)
  const result = test.result()
  const place = { id: test.id, suite, clause: bareTitle(clause), durationMs: Math.round(test.diagnostic()?.duration ?? 0) }
  if (result.state === 'failed') return { ...place, name: test.name, state: 'failed', note: failureNote(result.errors?.[0]?.message) ?? 'failed' }
  if (result.state === 'skipped' || result.state === 'pending') {
    const reason = SKIP_NOTE.exec(test.name)?.[1] ?? SKIP_NOTE.exec(clause)?.[1] ?? ('note' in result ? result.note : undefined) ?? 'skipped'
    return { ...place, name: bareTitle(test.name), state: 'skipped', note: reason }
  }
  return { ...place, name: test.name, state: 'passed' }
}

/**
 * The child process of `runConformance` (runner.ts; run by it, not an API): takes the job from
 * the parent, runs vitest, sends each result as it comes and the run's errors at the end.
 * If the parent dies first, it kills its own process group: the worker goes with it.
 */
export async function serveConformanceHost(): Promise<void> {
  const orphaned = (): void => {
    if (process.platform === 'win32') process.exit(1)
    else process.kill(-process.pid, 'SIGKILL')
  }
  process.once('disconnect', orphaned)
  const job = await new Promise<HostJob>((resolve) => process.once('message', (message) => resolve(message as HostJob)))
  const send = (message: HostMessage): Promise<void> =>
    new Promise((resolve) => {
      if (process.send === undefined) resolve()
      else process.send(message, undefined, undefined, () => resolve())
    })
  const reporter: Reporter = {
    onTestCaseResult(test) {
      void send({ type: 'result', test: reportOf(test) })
    },
  }
  const errors: string[] = []
  try {
    const { startVitest } = await import('vitest/node')
    const vitest = await startVitest(
      'test',
      [],
      {
        root: job.root,
        dir: job.dir,
        include: [job.file],
        config: false,
        // Vitest's result cache would land in the user's project (node_modules/.vite); keep it with the run.
        cache: false,
        watch: false,
        reporters: [reporter],
        passWithNoTests: true,
        pool: 'forks',
        maxWorkers: 1,
        fileParallelism: false,
        server: { deps: { inline: true } },
        testTimeout: job.timeoutMs + TIMEOUT_MARGIN_MS,
        hookTimeout: Math.max(120_000, job.timeoutMs + TIMEOUT_MARGIN_MS),
      },
      { server: { fs: { strict: false } } },
    )
    for (const testModule of vitest.state.getTestModules()) {
      for (const error of testModule.errors()) errors.push(error.message)
    }
    for (const error of vitest.state.getUnhandledErrors()) errors.push(String((error as Error).message ?? error))
    await vitest.close()
  } catch (err) {
    errors.push(err instanceof Error ? err.message : String(err))
  }
  await send({ type: 'done', errors })
  process.off('disconnect', orphaned)
  process.exit(0)
}

import { expect, vi } from 'vitest'
import { isFsError } from '@seamfs/core'

/**
 * Runs `operation`, which must fail `FS_ABORTED`, then checks `settled`: at once after a definite
 * abort (the backend answered within core's grace, its cleanup done), or, after one flagged
 * `indeterminate` (the backend had not answered yet: on a loaded machine its cleanup may still be
 * running), as soon as it holds, within 5 s.
 */
export async function abortedThen(operation: Promise<unknown>, settled: () => void): Promise<void> {
  let failure: unknown
  try {
    await operation
  } catch (err) {
    failure = err
  }
  expect(isFsError(failure, 'FS_ABORTED'), `expected FS_ABORTED, got ${String(failure)}`).toBe(true)
  if (isFsError(failure) && failure.indeterminate) await vi.waitFor(settled, { timeout: 5_000, interval: 10 })
  else settled()
}

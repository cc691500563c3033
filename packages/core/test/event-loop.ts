/**
 * The event loop as a test sees it: how long a body holds it at a time.
 */

/**
 * Runs `body` while a 1 ms ticker measures the longest the event loop was held, in ms (the ticker
 * runs before and after it). Measured in this process's CPU time between two ticks, so that time
 * the machine gave to other processes (a loaded test machine) does not count as a block.
 */
export async function held<T>(body: () => Promise<T>): Promise<{ value: T; maxMs: number }> {
  const cpu = (): number => {
    const { user, system } = process.cpuUsage()
    return (user + system) / 1000
  }
  let last = cpu()
  let maxMs = 0
  const timer = setInterval(() => {
    const now = cpu()
    maxMs = Math.max(maxMs, now - last)
    last = now
  }, 1)
  try {
    await new Promise((resolve) => setTimeout(resolve, 5))
    maxMs = 0
    const value = await body()
    // One more tick: a block that ended the call is measured too.
    await new Promise((resolve) => setTimeout(resolve, 5))
    return { value, maxMs }
  } finally {
    clearInterval(timer)
  }
}

/** A synchronous busy loop of `ms` of this process's CPU: what {@link held} must see as a block. */
export function busy(ms: number): void {
  const started = process.cpuUsage()
  for (;;) {
    const { user, system } = process.cpuUsage(started)
    if (user + system >= ms * 1000) return
  }
}

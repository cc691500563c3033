/**
 * Bounded fan-out for the searches: at most `limit` calls in flight, results handed
 * back in input order, so a remote walk costs about ⌈n / limit⌉ round trips instead of n while
 * its output stays exactly the sequential one.
 */

/** A settled call: its value, or what it threw (kept, never an unhandled rejection). */
export type Settled<R> = { readonly ok: true; readonly value: R } | { readonly ok: false; readonly error: unknown }

/**
 * Starts `fn(item)` for the items in order, keeping at most `limit` unsettled, and yields each
 * result in input order as soon as it and all before it settled. `admit(item)` (default: always)
 * may hold back an item until fewer calls are in flight; one item is always admitted when none is.
 * `release(item)` runs when an item's result is handed back. `beforeStart` runs before each call
 * starts (a budget check); what it throws ends the run at once. A run that ends early (that
 * throw, or a consumer's `break`) leaves the calls in flight to finish unobserved, their failures
 * caught: each call's own signal is the way to stop it.
 */
export async function* inOrder<T, R>(
  items: readonly T[],
  limit: number,
  fn: (item: T) => Promise<R>,
  options: { readonly admit?: (item: T, inFlight: number) => boolean; readonly release?: (item: T) => void; readonly beforeStart?: (item: T) => void } = {},
): AsyncGenerator<Settled<R>> {
  const pending: Promise<Settled<R>>[] = []
  let started = 0
  let next = 0
  const settle = (item: T): Promise<Settled<R>> => {
    let call: Promise<R>
    try {
      call = fn(item)
    } catch (error) {
      return Promise.resolve({ ok: false as const, error })
    }
    return call.then(
      (value) => ({ ok: true as const, value }),
      (error: unknown) => ({ ok: false as const, error }),
    )
  }
  while (next < items.length) {
    while (started < items.length && started - next < limit) {
      const item = items[started] as T
      const inFlight = started - next
      if (inFlight > 0 && options.admit !== undefined && !options.admit(item, inFlight)) break
      options.beforeStart?.(item)
      pending.push(settle(item))
      started++
    }
    const result = await (pending[next] as Promise<Settled<R>>)
    pending[next] = undefined as unknown as Promise<Settled<R>>
    options.release?.(items[next] as T)
    next++
    yield result
  }
}

/** `fn` over every item, at most `limit` at a time; the results in input order, or the first failure in input order. */
export async function mapInOrder<T, R>(items: readonly T[], limit: number, fn: (item: T) => Promise<R>, beforeStart?: () => void): Promise<R[]> {
  const out: R[] = []
  for await (const result of inOrder(items, limit, fn, beforeStart === undefined ? {} : { beforeStart })) {
    if (!result.ok) throw result.error
    out.push(result.value)
  }
  return out
}

/**
 * Bounded fan-out for the searches: at most `limit` calls in flight, results handed
 * back in input order, so a remote walk costs about ⌈n / limit⌉ round trips instead of n while
 * its output stays exactly the sequential one.
 */

/** A settled call: its value, or what it threw (kept, never an unhandled rejection). */
export type Settled<R> = { readonly ok: true; readonly value: R } | { readonly ok: false; readonly error: unknown }

/** How {@link inOrder} runs: what it admits, and how far ahead of the consumer it may run. */
export interface InOrderOptions<T> {
  /** Whether `item` may start now, with `inFlight` items started and not yet handed back (default: always). */
  readonly admit?: (item: T, inFlight: number) => boolean
  /** Runs when an item's result is handed back. */
  readonly release?: (item: T) => void
  /** Runs before each call starts (a budget check); what it throws ends the run. */
  readonly beforeStart?: (item: T) => void
  /**
   * The most items started and not yet handed back (default and floor: `limit`). Above `limit`, a
   * call that settles lets the next one start at once, while earlier ones are still running or the
   * consumer is still busy with the results before it: the link stays busy behind a slow head.
   */
  readonly lookahead?: number
}

/**
 * Starts `fn(item)` for the items in order, keeping at most `limit` unsettled and at most
 * `lookahead` started but not handed back, and yields each result in input order as soon as it and
 * all before it settled. A call that settles starts the next ones at once, also while the consumer
 * is busy with a result. `admit(item)` may hold back an item; one item is always admitted when
 * none is started and not handed back. `release(item)` runs when an item's result is handed back.
 * `beforeStart` runs before each call starts (a budget check); what it throws ends the run at its
 * next result. A run that ends early (that throw, or a consumer's `break`) starts nothing more and
 * leaves the calls in flight to finish unobserved, their failures caught: each call's own signal
 * is the way to stop it.
 */
export async function* inOrder<T, R>(
  items: readonly T[],
  limit: number,
  fn: (item: T) => Promise<R>,
  options: InOrderOptions<T> = {},
): AsyncGenerator<Settled<R>> {
  const lookahead = Math.max(limit, options.lookahead ?? limit)
  const pending: (Promise<Settled<R>> | undefined)[] = []
  let started = 0
  let next = 0
  let running = 0
  let ended = false
  let refused: { readonly error: unknown } | undefined
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
  const pump = (): void => {
    while (!ended && refused === undefined && started < items.length && running < limit && started - next < lookahead) {
      const item = items[started] as T
      const inFlight = started - next
      if (inFlight > 0 && options.admit !== undefined && !options.admit(item, inFlight)) return
      try {
        options.beforeStart?.(item)
      } catch (error) {
        refused = { error }
        return
      }
      running++
      pending[started++] = settle(item).then((result) => {
        running--
        pump()
        return result
      })
    }
  }
  try {
    while (next < items.length) {
      pump()
      const head = pending[next]
      if (head === undefined) throw (refused as { readonly error: unknown }).error
      const result = await head
      pending[next] = undefined
      options.release?.(items[next] as T)
      next++
      yield result
    }
  } finally {
    ended = true
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

/**
 * At most `limit` calls at a time across the parts of one search (its walk and the reads that run
 * ahead of it), whatever each part's own bound: the walk's calls are let through first, since what
 * it finds is what the reads wait for.
 */
export class Limiter {
  #free: number
  readonly #first: (() => void)[] = []
  readonly #later: (() => void)[] = []

  constructor(limit: number) {
    this.#free = limit
  }

  /** `call`, once a slot is free, before any call queued by {@link Limiter.run}. */
  first<T>(call: () => Promise<T>): Promise<T> {
    return this.#run(call, this.#first)
  }

  /** `call`, once a slot is free. */
  run<T>(call: () => Promise<T>): Promise<T> {
    return this.#run(call, this.#later)
  }

  async #run<T>(call: () => Promise<T>, queue: (() => void)[]): Promise<T> {
    if (this.#free > 0) this.#free--
    else await new Promise<void>((resolve) => queue.push(resolve))
    try {
      return await call()
    } finally {
      const next = this.#first.shift() ?? this.#later.shift()
      if (next === undefined) this.#free++
      else next()
    }
  }
}

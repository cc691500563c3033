import { setTimeout as sleep } from 'node:timers/promises'
import { describe, expect, it } from 'vitest'
import fc from 'fast-check'
import { KeyedMutex } from '@seamfs/core/backend'

interface Deferred<T> {
  readonly promise: Promise<T>
  resolve(value: T): void
  reject(reason: unknown): void
}

function deferred<T = void>(): Deferred<T> {
  let resolve!: (value: T) => void
  let reject!: (reason: unknown) => void
  const promise = new Promise<T>((res, rej) => {
    resolve = res
    reject = rej
  })
  return { promise, resolve, reject }
}

/** Lets every pending microtask (and one macrotask turn) run. */
const flush = (): Promise<void> => sleep(0)

describe('KeyedMutex', () => {
  it('runs tasks on one key one at a time, in FIFO order', async () => {
    const mutex = new KeyedMutex()
    const log: string[] = []
    // Earlier tasks take longer: without the lock they would finish in reverse.
    const runs = [0, 1, 2, 3, 4].map((i) =>
      mutex.run('k', async () => {
        log.push(`start ${i}`)
        await sleep(10 - 2 * i)
        log.push(`end ${i}`)
        return i
      }),
    )
    expect(await Promise.all(runs)).toEqual([0, 1, 2, 3, 4])
    expect(log).toEqual([0, 1, 2, 3, 4].flatMap((i) => [`start ${i}`, `end ${i}`]))
  })

  it('does not start a queued task before the running one settles', async () => {
    const mutex = new KeyedMutex()
    const gate = deferred()
    let secondStarted = false
    const first = mutex.run('k', () => gate.promise)
    const second = mutex.run('k', async () => {
      secondStarted = true
    })
    await flush()
    expect(secondStarted).toBe(false)
    gate.resolve()
    await first
    await second
    expect(secondStarted).toBe(true)
  })

  it('runs different keys concurrently', async () => {
    const mutex = new KeyedMutex()
    const a = deferred()
    const b = deferred()
    const started: string[] = []
    const runA = mutex.run('a', async () => {
      started.push('a')
      await a.promise
    })
    const runB = mutex.run('b', async () => {
      started.push('b')
      await b.promise
    })
    await flush()
    // Both are inside their critical sections at the same time.
    expect(started.sort()).toEqual(['a', 'b'])
    expect(mutex.size).toBe(2)
    b.resolve()
    await runB
    a.resolve()
    await runA
    expect(mutex.size).toBe(0)
  })

  it('does not block the next task after a rejection, and passes the rejection to its caller', async () => {
    const mutex = new KeyedMutex()
    const boom = new Error('boom')
    const failed = mutex.run('k', async () => {
      await sleep(2)
      throw boom
    })
    const next = mutex.run('k', async () => 'ok')
    await expect(failed).rejects.toBe(boom)
    await expect(next).resolves.toBe('ok')
    expect(mutex.size).toBe(0)
  })

  it('survives a task function that throws synchronously', async () => {
    const mutex = new KeyedMutex()
    const boom = new Error('sync')
    const failed = mutex.run('k', () => {
      throw boom
    })
    const next = mutex.run('k', async () => 7)
    await expect(failed).rejects.toBe(boom)
    await expect(next).resolves.toBe(7)
    expect(mutex.size).toBe(0)
  })

  it('tracks held keys in size and returns to 0 once everything settles', async () => {
    const mutex = new KeyedMutex()
    expect(mutex.size).toBe(0)
    const gates = [deferred(), deferred(), deferred()]
    const runs = [
      mutex.run('x', () => (gates[0] as Deferred<void>).promise),
      mutex.run('x', () => (gates[1] as Deferred<void>).promise),
      mutex.run('y', () => (gates[2] as Deferred<void>).promise),
    ]
    expect(mutex.size).toBe(2)
    ;(gates[0] as Deferred<void>).resolve()
    await runs[0]
    await flush()
    expect(mutex.size).toBe(2) // x is still held by the second task
    ;(gates[2] as Deferred<void>).reject(new Error('y failed'))
    await expect(runs[2]).rejects.toThrow('y failed')
    expect(mutex.size).toBe(1)
    ;(gates[1] as Deferred<void>).resolve()
    await runs[1]
    expect(mutex.size).toBe(0)
    // A released key can be taken again immediately.
    await expect(mutex.run('x', async () => 'again')).resolves.toBe('again')
    expect(mutex.size).toBe(0)
  })

  it('lets a task take another key from inside its critical section', async () => {
    const mutex = new KeyedMutex()
    const result = await mutex.run('outer', () => mutex.run('inner', async () => 'nested'))
    expect(result).toBe('nested')
    expect(mutex.size).toBe(0)
  })

  it('keeps FIFO order for tasks queued behind a failure', async () => {
    const mutex = new KeyedMutex()
    const order: number[] = []
    const runs = [0, 1, 2, 3].map((i) =>
      mutex.run('k', async () => {
        await sleep(1)
        order.push(i)
        if (i % 2 === 0) throw new Error(`fail ${i}`)
        return i
      }),
    )
    const settled = await Promise.allSettled(runs)
    expect(order).toEqual([0, 1, 2, 3])
    expect(settled.map((s) => s.status)).toEqual(['rejected', 'fulfilled', 'rejected', 'fulfilled'])
    expect(mutex.size).toBe(0)
  })

  it('never overlaps two tasks on one key, under any interleaving (fc.scheduler)', async () => {
    const task = fc.record({ key: fc.constantFrom('a', 'b', 'c'), steps: fc.nat(3), fail: fc.boolean() })
    await fc.assert(
      fc.asyncProperty(fc.scheduler(), fc.array(task, { minLength: 1, maxLength: 12 }), async (s, tasks) => {
        const mutex = new KeyedMutex()
        const active = new Map<string, number>()
        const startOrder = new Map<string, number[]>()
        const violations: number[] = []
        const runs = tasks.map((t, i) =>
          mutex.run(t.key, async () => {
            const now = (active.get(t.key) ?? 0) + 1
            if (now !== 1) violations.push(i)
            active.set(t.key, now)
            startOrder.set(t.key, [...(startOrder.get(t.key) ?? []), i])
            for (let step = 0; step < t.steps; step++) await s.schedule(Promise.resolve(), `${t.key}#${i}.${step}`)
            active.set(t.key, now - 1)
            if (t.fail) throw new Error(`task ${i}`)
            return i
          }),
        )
        const settled = await s.waitFor(Promise.allSettled(runs))
        settled.forEach((r, i) => {
          const t = tasks[i] as (typeof tasks)[number]
          if (t.fail) expect(r.status).toBe('rejected')
          else expect(r).toEqual({ status: 'fulfilled', value: i })
        })
        for (const key of ['a', 'b', 'c']) {
          const submitted = tasks.flatMap((t, i) => (t.key === key ? [i] : []))
          expect(startOrder.get(key) ?? []).toEqual(submitted)
        }
        expect(violations).toEqual([])
        expect(mutex.size).toBe(0)
      }),
      { numRuns: 300 },
    )
  })

  it('never overlaps two tasks on one key with real random delays', async () => {
    const task = fc.record({ key: fc.constantFrom('a', 'b', 'c'), delay: fc.nat(3), fail: fc.boolean() })
    await fc.assert(
      fc.asyncProperty(fc.array(task, { minLength: 1, maxLength: 10 }), async (tasks) => {
        const mutex = new KeyedMutex()
        const active = new Map<string, number>()
        const violations: string[] = []
        const runs = tasks.map((t, i) =>
          mutex.run(t.key, async () => {
            if ((active.get(t.key) ?? 0) !== 0) violations.push(`${t.key}#${i}`)
            active.set(t.key, 1)
            await sleep(t.delay)
            active.set(t.key, 0)
            if (t.fail) throw new Error('fail')
          }),
        )
        await Promise.allSettled(runs)
        expect(violations).toEqual([])
        expect(mutex.size).toBe(0)
      }),
      { numRuns: 40 },
    )
  })
})

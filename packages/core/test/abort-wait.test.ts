/**
 * An abort is honoured at once, also while the store has not answered: core races
 * every hook against the caller's signal. A read fails at the abort; a mutation whose hook has
 * not answered within the grace fails `FS_ABORTED` flagged `indeterminate` (it may still land);
 * the late answer is consumed (a late stream is released, a late failure never goes unhandled).
 * Checked bare and through both layers, with hooks that hang until the test lets them go.
 */
import { getEventListeners } from 'node:events'
import { afterEach, describe, expect, it } from 'vitest'
import { MemoryFileSystem } from '@seamfs/backend-memory'
import { FsError, MountFileSystem, SandboxedFileSystem } from '@seamfs/core'
import { ABORT_GRACE_MS, sharedAbortController, untilAborted, whenAborted } from '../src/abort-wait.js'
import type { Awaitable, FileSystem, FsTarget } from '@seamfs/core/backend'
import { expectFsErrorAsync } from './helpers.js'
import { FrozenMemory } from '../../backend-memory/test/frozen-store.js'

/** A store whose write honours its signal: it answers `FS_ABORTED` itself, at the abort, having changed nothing. */
class PoliteMemory extends MemoryFileSystem {
  protected override publishBytes(...args: Parameters<MemoryFileSystem['publishBytes']>): Awaitable<Awaited<ReturnType<MemoryFileSystem['publishBytes']>>> {
    const signal = args[2].signal
    return new Promise((_, reject) => {
      signal?.addEventListener('abort', () => reject(FsError.aborted('write', signal.reason)), { once: true })
    })
  }
}

const opened: FileSystem[] = []
afterEach(async () => {
  await Promise.all(opened.splice(0).map((fs) => fs.close()))
})

function view(name: string, inner: MemoryFileSystem): FileSystem {
  opened.push(inner)
  if (name === 'sandbox') return new SandboxedFileSystem(inner, { mode: 'workspace-write', workspaceRoot: '/w' })
  if (name === 'mounts') return new MountFileSystem({ '/': inner })
  return inner
}

/** Runs `call` with a signal aborted after 30 ms; returns its error and how long it took. */
async function abortedAfter30ms(call: (signal: AbortSignal) => Promise<unknown>): Promise<{ error: FsError; ms: number }> {
  const controller = new AbortController()
  const started = performance.now()
  const timer = setTimeout(() => controller.abort(new Error('deadline')), 30)
  try {
    const error = await expectFsErrorAsync(call(controller.signal), 'FS_ABORTED')
    return { error, ms: performance.now() - started }
  } finally {
    clearTimeout(timer)
  }
}

describe.each(['bare', 'sandbox', 'mounts'])('a store that stops answering (%s)', (name) => {
  const setup = async (): Promise<{ inner: FrozenMemory; fs: FileSystem; a: FsTarget; d: FsTarget }> => {
    const inner = new FrozenMemory({ files: { 'w/a.txt': 'alpha\n', 'w/d/b.txt': 'beta\n' } })
    const fs = view(name, inner)
    const a = await fs.resolve('/w/a.txt')
    const d = await fs.resolve('/w/d')
    inner.freeze()
    return { inner, fs, a, d }
  }

  it('fails reads with FS_ABORTED at the abort, not when the store answers, and never indeterminate', async () => {
    const { inner, fs, a, d } = await setup()
    const reads: Array<[string, (signal: AbortSignal) => Promise<unknown>]> = [
      ['stat', (signal) => fs.stat(a, { signal })],
      ['readText', (signal) => fs.readText(a, { signal })],
      ['readBytes', (signal) => fs.readBytes(a, { signal })],
      ['listDir', (signal) => fs.listDir(d, { signal })],
      ['streamText', (signal) => fs.streamText(a, { signal })],
    ]
    for (const [what, call] of reads) {
      const { error, ms } = await abortedAfter30ms(call)
      expect(error.indeterminate, what).toBe(false)
      // Generous for a loaded machine; the store never answers while frozen, so only the abort can end it.
      expect(ms, what).toBeLessThan(2000)
    }
    inner.thaw()
    expect(await fs.readText(a)).toBe('alpha\n')
    // The stream opened after its caller left was released, not leaked.
    await new Promise((resolve) => setTimeout(resolve, 10))
    expect(inner.released).toBe(1)
  })

  it('fails mutations with FS_ABORTED flagged indeterminate, and the late write may land', async () => {
    const { inner, fs, a, d } = await setup()
    const fresh = await fs.resolve('/w/new.txt')
    const mutations: Array<[string, (signal: AbortSignal) => Promise<unknown>]> = [
      ['writeText', (signal) => fs.writeText(a, 'written\n', { signal })],
      ['editText', (signal) => fs.editText(a, { oldString: 'alpha', newString: 'edited', replaceAll: false }, { signal })],
      ['writeBytes', (signal) => fs.writeBytes(fresh, new Uint8Array([1]), { signal })],
      ['createDirectory', (signal) => fs.createDirectory(d, { signal })],
      ['remove', (signal) => fs.remove(fresh, { signal })],
    ]
    for (const [what, call] of mutations) {
      const { error, ms } = await abortedAfter30ms(call)
      expect(error.indeterminate, what).toBe(true)
      expect(error.message, what).toMatch(/may still have taken effect/)
      expect(ms, what).toBeLessThan(2000)
    }
    inner.thaw()
    // The hooks ran on once the store answered: the write did land, which is why it was not reported as failed.
    await new Promise((resolve) => setTimeout(resolve, 10))
    expect((await fs.stat(fresh)) === undefined || (await fs.readBytes(fresh)).length === 1).toBe(true)
    expect(['written\n', 'edited\n'].includes(await fs.readText(a)) || (await fs.readText(a)) === 'alpha\n').toBe(true)
  })

  it('stops a stream whose store stops answering mid-file, and releases it once the chunk comes', async () => {
    const inner = new FrozenMemory({ files: { 'w/a.txt': 'x'.repeat(200_000) } })
    const fs = view(name, inner)
    const a = await fs.resolve('/w/a.txt')
    const controller = new AbortController()
    const stream = await fs.streamText(a, { signal: controller.signal })
    const chunks = stream[Symbol.asyncIterator]()
    expect((await chunks.next()).done).toBe(false)
    inner.freeze()
    setTimeout(() => controller.abort(new Error('deadline')), 20)
    const started = performance.now()
    await expectFsErrorAsync(chunks.next(), 'FS_ABORTED')
    expect(performance.now() - started).toBeLessThan(2000)
    expect(inner.released).toBe(0)
    // The chunk in flight comes late; only then is the source released (an iterator is never re-entered).
    inner.thaw()
    await new Promise((resolve) => setTimeout(resolve, 10))
    expect(inner.released).toBe(1)
  })
})

describe('a mutation whose backend honours its signal', () => {
  it('keeps its definite FS_ABORTED (nothing changed), answered within the grace', async () => {
    const fs = new PoliteMemory({ files: { 'w/a.txt': 'alpha\n' } })
    opened.push(fs)
    const a = await fs.resolve('/w/a.txt')
    const { error, ms } = await abortedAfter30ms((signal) => fs.writeText(a, 'new\n', { signal }))
    expect(error.indeterminate).toBe(false)
    expect(ms).toBeLessThan(30 + ABORT_GRACE_MS + 2000)
    expect(await fs.readText(a)).toBe('alpha\n')
  })
})

/** A store whose write checks its signal the standard way, `signal.throwIfAborted()`, before it changes anything. */
class StandardCheckMemory extends MemoryFileSystem {
  protected override async publishBytes(...args: Parameters<MemoryFileSystem['publishBytes']>): Promise<Awaited<ReturnType<MemoryFileSystem['publishBytes']>>> {
    const signal = args[2].signal
    await new Promise<void>((resolve) => signal?.addEventListener('abort', () => resolve(), { once: true }))
    signal?.throwIfAborted()
    return super.publishBytes(...args)
  }
}

describe('a mutation whose backend throws the signal reason (signal.throwIfAborted())', () => {
  it('is FS_ABORTED, definite, with the reason as its cause', async () => {
    const fs = new StandardCheckMemory({ files: { 'w/a.txt': 'alpha\n' } })
    opened.push(fs)
    const a = await fs.resolve('/w/a.txt')
    const { error } = await abortedAfter30ms((signal) => fs.writeText(a, 'new\n', { signal }))
    expect(error.indeterminate).toBe(false)
    expect((error.cause as Error).message).toBe('deadline')
    expect(await fs.readText(a)).toBe('alpha\n')
  })
})

describe('FsError.indeterminate', () => {
  it('copies code, message, cause, retryable and details, flagged; an error already flagged is kept', () => {
    const cause = new Error('socket')
    const err = FsError.io('write', '/a', 'connection lost', { cause, retryable: true })
    const flagged = FsError.indeterminate(err)
    expect(flagged).not.toBe(err)
    expect([flagged.code, flagged.message, flagged.cause, flagged.retryable, flagged.indeterminate]).toEqual([err.code, err.message, cause, true, true])
    expect(FsError.indeterminate(flagged)).toBe(flagged)
    expect(err.indeterminate).toBe(false)
  })
})

describe('many calls waiting on one signal', () => {
  it('add one listener to it, end at its abort together, and leave nothing behind once answered', async () => {
    const answered = new AbortController()
    const settle = (p: Promise<unknown>): Promise<string> =>
      p.then(
        (v) => `ok ${String(v)}`,
        (err: unknown) => String((err as { code?: unknown }).code),
      )
    // Answered ones: the signal aborts afterwards, and none of them hears it.
    const quick = await Promise.all(Array.from({ length: 20 }, (_, i) => settle(Promise.resolve(untilAborted(Promise.resolve(i), answered.signal, 'read')))))
    expect(quick).toEqual(Array.from({ length: 20 }, (_, i) => `ok ${i}`))
    answered.abort()
    // Pending ones: 50 reads and a mutation that never answer, on one signal.
    const controller = new AbortController()
    const never = new Promise<number>(() => undefined)
    const reads = Array.from({ length: 50 }, () => settle(Promise.resolve(untilAborted(never, controller.signal, 'read'))))
    const write = settle(Promise.resolve(untilAborted(never, controller.signal, 'write')))
    expect(getEventListeners(controller.signal, 'abort')).toHaveLength(1)
    controller.abort()
    expect(new Set(await Promise.all(reads))).toEqual(new Set(['FS_ABORTED']))
    expect(await write).toBe('FS_ABORTED')
    // Once the last wait stops, the listener goes (an AbortSignal.any or timeout signal with one is kept alive by Node)...
    const composite = AbortSignal.any([new AbortController().signal])
    await Promise.all([untilAborted(Promise.resolve(1), composite, 'read'), untilAborted(Promise.resolve(2), composite, 'read')])
    expect(getEventListeners(composite, 'abort')).toHaveLength(0)
    // ...but on a shared controller's signal, which many calls wait on in turn, it stays until the abort.
    const shared = sharedAbortController()
    await untilAborted(Promise.resolve(3), shared.signal, 'read')
    await untilAborted(Promise.resolve(4), shared.signal, 'read')
    expect(getEventListeners(shared.signal, 'abort')).toHaveLength(1)
    // A wait that ended before the abort is not called at it.
    let called = 0
    const other = new AbortController()
    const stop = whenAborted(other.signal, () => called++)
    whenAborted(other.signal, () => called++)
    stop()
    other.abort()
    expect(called).toBe(1)
  })
})

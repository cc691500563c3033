/**
 * The filesystem's lifecycle: `close()` is idempotent ("Releases connections and handles. A no-op
 * where there are none; idempotent."), and a closed filesystem stays within the contract's common
 * rules: each operation after `close()` works (a store with nothing to release) or fails with an
 * `FsError` (a store whose connection is gone: SFTP's `FS_IO_ERROR`), and none hangs. Every call is
 * bounded, so a backend whose operations wait forever on a closed connection fails here, by name,
 * instead of timing the whole test out.
 */
import fc from 'fast-check'
import { expect } from 'vitest'
import { isFsError, type FileSystem, type FsTarget } from '@seamfs/core'
import { yieldToLoop, type Env, type Kit, type Needs } from '../kit.js'
import { holds } from './seeded.js'

/** One operation, run on a closed filesystem, on targets resolved before it was closed. */
interface ClosedOp {
  readonly name: string
  readonly needs: Needs
  readonly call: (fs: FileSystem, t: Targets) => unknown
}

interface Targets {
  readonly file: FsTarget
  readonly dir: FsTarget
  readonly gone: FsTarget
  readonly fresh: FsTarget
}

async function drain(chunks: AsyncIterable<unknown>): Promise<void> {
  for await (const chunk of chunks) void chunk
}

const WRITES: Needs = { writes: true }

const CLOSED_OPS: readonly ClosedOp[] = [
  { name: 'resolve', needs: {}, call: (fs) => fs.resolve('c/f.txt') },
  { name: 'fileUrl', needs: {}, call: (fs, t) => fs.fileUrl(t.file) },
  { name: 'contains', needs: {}, call: (fs, t) => fs.contains(t.dir, t.file) },
  { name: 'stat', needs: {}, call: (fs, t) => fs.stat(t.file) },
  { name: 'lstat', needs: {}, call: (fs) => fs.lstat('c/f.txt') },
  { name: 'readText', needs: {}, call: (fs, t) => fs.readText(t.file) },
  { name: 'readBytes', needs: {}, call: (fs, t) => fs.readBytes(t.file) },
  { name: 'streamText', needs: {}, call: async (fs, t) => drain(await fs.streamText(t.file)) },
  { name: 'streamBytes', needs: {}, call: async (fs, t) => drain(await fs.streamBytes(t.file)) },
  {
    name: 'openFile',
    needs: {},
    call: async (fs, t) => {
      const opened = await fs.openFile(t.file)
      await opened.close()
    },
  },
  { name: 'listDir', needs: {}, call: (fs, t) => fs.listDir(t.dir) },
  { name: 'listTree', needs: {}, call: async (fs, t) => drain(await fs.listTree(t.dir)) },
  { name: 'writeText', needs: WRITES, call: (fs, t) => fs.writeText(t.fresh, 'after close') },
  { name: 'writeBytes', needs: WRITES, call: (fs, t) => fs.writeBytes(t.file, Uint8Array.of(0x61)) },
  { name: 'editText', needs: WRITES, call: (fs, t) => fs.editText(t.file, { oldString: 'one', newString: 'ONE', replaceAll: false }) },
  { name: 'remove', needs: { writes: true, caps: ['remove'] }, call: (fs, t) => fs.remove(t.gone) },
  { name: 'rename', needs: { writes: true, caps: ['rename'] }, call: (fs, t) => fs.rename(t.gone, t.fresh) },
  { name: 'createDirectory', needs: { writes: true, caps: ['createDirectory'] }, call: (fs, t) => fs.createDirectory(t.dir) },
  { name: 'close', needs: {}, call: (fs) => fs.close() },
]

/** How a bounded call ended: `ok`, an `FsError`'s code, or what is wrong with it (a raw error, a hang). */
async function bounded(call: () => unknown, boundMs: number): Promise<string> {
  let timer: ReturnType<typeof setTimeout> | undefined
  const hang = new Promise<string>((resolve) => {
    timer = setTimeout(() => resolve(`did not settle within ${boundMs} ms`), boundMs)
  })
  const work = (async (): Promise<string> => {
    try {
      await call()
      return 'ok'
    } catch (err) {
      if (isFsError(err)) return err.code
      return `threw a raw error instead of an FsError: ${err instanceof Error ? `${err.name}: ${err.message}` : String(err)}`
    }
  })()
  try {
    return await Promise.race([work, hang])
  } finally {
    clearTimeout(timer)
  }
}

const fine = (result: string): boolean => result === 'ok' || result.startsWith('FS_')

/** The clause (see the file's TSDoc). */
export function lifecycleClauses(kit: Kit): void {
  // Each call gets a bound well inside the test's timeout: a hang is named, not a timeout of the whole test.
  const boundMs = Math.min(5_000, Math.max(500, Math.floor(kit.tuning.timeoutMs / 8)))
  const arrange = async (env: Env): Promise<Targets> => {
    await env.write('c/f.txt', 'one two\n')
    await env.write('c/sub/inner.txt', 'inner\n')
    return {
      file: await env.resolve('c/f.txt'),
      dir: await env.resolve('c/sub'),
      gone: await env.resolve('c/gone.txt'),
      fresh: await env.resolve('c/fresh.txt'),
    }
  }

  kit.group('lifecycle', {}, () => {
    kit.test('close() twice resolves, each time at once', async (env) => {
      await arrange(env)
      expect(await bounded(() => env.fs.close(), boundMs), 'the first close()').toBe('ok')
      expect(await bounded(() => env.fs.close(), boundMs), 'the second close()').toBe('ok')
    })

    kit.test('after close(), every operation works or fails with an FsError, and none hangs', async (env) => {
      const targets = await arrange(env)
      expect(await bounded(() => env.fs.close(), boundMs), 'close()').toBe('ok')
      // All at once, each bounded: a backend whose every call hangs fails within one bound, naming each.
      const ops = CLOSED_OPS.filter((op) => kit.unmet(op.needs) === undefined)
      const results = await Promise.all(ops.map(async (op) => `${op.name}: ${await bounded(() => op.call(env.fs, targets), boundMs)}`))
      expect(
        results.filter((r) => !fine(r.slice(r.indexOf(': ') + 2))),
        'operations after close()',
      ).toEqual([])
    })

    const inFlightTitle =
      'close() at any moment of operations in flight (drawn ones, drawn moments): each settles, working or with an FsError, and so does every operation after it'
    kit.test(
      inFlightTitle,
      async () => {
        const ops = CLOSED_OPS.filter((op) => op.name !== 'close' && kit.unmet(op.needs) === undefined)
        const drawn = fc.record({
          started: fc.uniqueArray(fc.constantFrom(...ops), { minLength: 1, maxLength: 6, selector: (op) => op.name }),
          turns: fc.integer({ min: 0, max: 8 }),
          loopTurns: fc.integer({ min: 0, max: 3 }),
          after: fc.constantFrom(...ops),
        })
        // Each run closes its subject: a fresh one per run.
        await holds(
          kit,
          inFlightTitle,
          drawn.map((d) =>
            Object.assign(d, {
              [fc.toStringMethod]: () =>
                `${d.started.map((op) => op.name).join(', ')} in flight, close() after ${d.turns} promise and ${d.loopTurns} loop turns, then ${d.after.name}`,
            }),
          ),
          ({ started, turns, loopTurns, after }) =>
            kit.withEnv(async (env) => {
              const targets = await arrange(env)
              const inFlight = started.map(async (op) => `${op.name}: ${await bounded(() => op.call(env.fs, targets), boundMs)}`)
              for (let i = 0; i < turns; i++) await Promise.resolve()
              for (let i = 0; i < loopTurns; i++) await yieldToLoop()
              const closed = await bounded(() => env.fs.close(), boundMs)
              const results = [
                ...(await Promise.all(inFlight)),
                `close(): ${closed}`,
                `${after.name} after close(): ${await bounded(() => after.call(env.fs, targets), boundMs)}`,
              ]
              expect(
                results.filter((r) => !fine(r.slice(r.indexOf(': ') + 2))),
                results.join('; '),
              ).toEqual([])
              expect(closed, 'close() with operations in flight').toBe('ok')
            }),
          Math.max(3, Math.ceil(kit.tuning.generativeRuns / 5)),
        )
      },
      Math.max(kit.tuning.timeoutMs, 20 * 5_000),
    )
  })
}

/**
 * glob and grep fan out: listings, link checks and reads keep up to
 * `searchConcurrency` calls in flight, and the answer is exactly the one-at-a-time answer.
 */
import fc from 'fast-check'
import { describe, expect, it } from 'vitest'
import { FsError, type FsDirEntry, type FsInfo, type FsTarget } from '@seamfs/core'
import type { Awaitable, ReadRequest } from '@seamfs/core/backend'
import { MemoryFileSystem } from '@seamfs/backend-memory'
import { createFileToolsByName, DEFAULT_CONFIG, type ToolsConfig } from '@seamfs/tools'
import { inOrder, mapInOrder } from '../src/bounded.js'

const tick = (): Promise<void> => new Promise((resolve) => setImmediate(resolve))

/**
 * A memory backend that counts its calls in flight (listings, stats and reads: the hooks behind `listDir`, `stat` and
 * `readBytes`), yields before answering, and can fail or hang chosen reads (grep reads ahead with `readBytes`).
 */
class Instrumented extends MemoryFileSystem {
  inFlight = 0
  maxInFlight = 0
  calls = 0
  aborted = 0
  failRead = new Set<string>()
  hangRead = new Set<string>()

  async #counted<T>(body: () => T | Promise<T>): Promise<T> {
    this.calls++
    this.maxInFlight = Math.max(this.maxInFlight, ++this.inFlight)
    try {
      await tick()
      return await body()
    } finally {
      this.inFlight--
    }
  }

  protected override listEntries(target: FsTarget): Promise<FsDirEntry[]> {
    return this.#counted(() => super.listEntries(target))
  }

  protected override statTarget(target: FsTarget): Promise<FsInfo | undefined> {
    return this.#counted(() => super.statTarget(target))
  }

  protected override loadBytes(target: FsTarget, request: ReadRequest): Promise<Uint8Array> {
    return this.#counted(async () => {
      if (this.failRead.has(target.displayPath)) throw FsError.io('read', target.displayPath, 'disk on fire')
      if (this.hangRead.has(target.displayPath)) {
        const { signal } = request
        await new Promise<void>((resolve) => {
          if (signal?.aborted === true) resolve()
          signal?.addEventListener('abort', () => resolve(), { once: true })
        })
        this.aborted++
        throw FsError.aborted('read', signal?.reason)
      }
      return super.loadBytes(target, request)
    })
  }
}

function tree(dirs: number, filesPer: number): Record<string, string> {
  const files: Record<string, string> = {}
  for (let d = 0; d < dirs; d++) for (let f = 0; f < filesPer; f++) files[`d${d}/sub/f${f}.txt`] = f % 2 === 0 ? `x ${d}/${f}\n` : 'none\n'
  return files
}

const toolsOn = (fs: MemoryFileSystem, config: Partial<ToolsConfig> = {}) => createFileToolsByName({ fs, cwd: '/w', config, sandbox: false })

describe('bounded fan-out', () => {
  it('keeps up to searchConcurrency calls in flight, and never more', async () => {
    for (const searchConcurrency of [1, 3, 8]) {
      const fs = new Instrumented({ cwd: '/w', files: tree(20, 5) })
      const tools = toolsOn(fs, { searchConcurrency })
      const grep = await tools.grep.execute({ pattern: 'x' })
      expect(grep.isError).toBe(false)
      expect(grep.value?.totalMatches).toBe(20 * 3)
      expect(fs.maxInFlight, `searchConcurrency ${searchConcurrency}`).toBe(searchConcurrency)
      expect(fs.inFlight).toBe(0)
    }
  })

  it('answers exactly as one call at a time, whatever the concurrency and the tree', async () => {
    const name = fc.constantFrom('a', 'b', 'B', 'é', '.h', 'z9', '😀')
    const path = fc.array(name, { minLength: 1, maxLength: 4 }).map((parts) => parts.join('/'))
    const content = fc.oneof(fc.constantFrom('x\n', 'no\n', 'x x\nx\n', ''), fc.constant(new Uint8Array([0, 1, 2])))
    await fc.assert(
      fc.asyncProperty(fc.dictionary(path, content, { maxKeys: 25 }), fc.integer({ min: 2, max: 9 }), async (files, searchConcurrency) => {
        const make = (): Instrumented | undefined => {
          try {
            return new Instrumented({ cwd: '/w', files })
          } catch {
            return undefined // a path is both a file and a directory: no such tree
          }
        }
        const one = make()
        const many = make()
        if (one === undefined || many === undefined) return
        const seq = toolsOn(one, { searchConcurrency: 1 })
        const par = toolsOn(many, { searchConcurrency })
        for (const args of [{ pattern: '**/*' }, { pattern: '*.h' }]) expect(await par.glob.execute(args)).toEqual(await seq.glob.execute(args))
        for (const args of [{ pattern: 'x' }, { pattern: 'x', include: 'a/**' }]) expect(await par.grep.execute(args)).toEqual(await seq.grep.execute(args))
      }),
      { numRuns: 60 },
    )
  })

  it('a failing read ends grep with that failure, as one at a time does, and stops the reads still in flight', async () => {
    const files = tree(4, 6)
    const fail = (): Instrumented => {
      const fs = new Instrumented({ cwd: '/w', files })
      fs.failRead.add('/w/d1/sub/f2.txt')
      for (let f = 0; f < 6; f++) fs.hangRead.add(`/w/d2/sub/f${f}.txt`)
      return fs
    }
    const seq = await toolsOn(fail(), { searchConcurrency: 1 }).grep.execute({ pattern: 'x' })
    const fs = fail()
    const par = await toolsOn(fs, { searchConcurrency: 8 }).grep.execute({ pattern: 'x' })
    expect(par).toEqual(seq)
    expect(par.text).toContain('disk on fire')
    // The reads started ahead of the failure were aborted when grep gave up, not left hanging.
    for (let i = 0; i < 20 && fs.inFlight > 0; i++) await tick()
    expect(fs.inFlight).toBe(0)
    expect(fs.aborted).toBeGreaterThan(0)
  })

  it('a deadline stops the reads in flight too', async () => {
    const fs = new Instrumented({ cwd: '/w', files: tree(2, 4) })
    for (let d = 0; d < 2; d++) for (let f = 0; f < 4; f++) fs.hangRead.add(`/w/d${d}/sub/f${f}.txt`)
    const result = await toolsOn(fs, { searchTimeoutMs: 100 }).grep.execute({ pattern: 'x' })
    expect(result.text).toMatch(/^Error: grep stopped after 100 ms/)
    for (let i = 0; i < 20 && fs.inFlight > 0; i++) await tick()
    expect(fs.inFlight).toBe(0)
    expect(fs.aborted).toBe(8)
  })

  it('64 calls in flight print no listener-leak warning (each listens on the search signal)', async () => {
    const warnings: string[] = []
    const onWarning = (w: Error): void => void warnings.push(w.name)
    process.on('warning', onWarning)
    try {
      const fs = new Instrumented({ cwd: '/w', files: tree(40, 4) })
      const grep = await toolsOn(fs, { searchConcurrency: 64 }).grep.execute({ pattern: 'x' }, { signal: new AbortController().signal })
      expect(grep.value?.totalMatches).toBe(80)
      expect(fs.maxInFlight).toBeGreaterThan(10)
      await tick()
    } finally {
      process.off('warning', onWarning)
    }
    expect(warnings).toEqual([])
  })

  it('a file larger than its listing said is streamed, not read whole: read-ahead stays bounded whatever the sizes claim', async () => {
    const big = `x big\n${'y'.repeat(64 * 1024)}\n`
    class Lying extends Instrumented {
      wholeReads: number[] = []
      streamed: string[] = []
      protected override openBytes(target: FsTarget): Awaitable<Iterable<Uint8Array>> {
        this.streamed.push(target.displayPath)
        return super.openBytes(target)
      }
      protected override async listEntries(target: FsTarget): Promise<FsDirEntry[]> {
        return (await super.listEntries(target)).map((e) => (e.type === 'file' ? { ...e, size: 1 } : e))
      }
      protected override loadBytes(target: FsTarget, request: ReadRequest): Promise<Uint8Array> {
        this.wholeReads.push(request.maxBytes)
        return super.loadBytes(target, request)
      }
    }
    const fs = new Lying({ cwd: '/w', files: { 'a.txt': big, 'b.txt': 'x small\n' } })
    const grep = await toolsOn(fs, { readStreamMinSize: 1024 }).grep.execute({ pattern: '^x' })
    expect(grep.value?.matches.map((m) => [m.path, m.text])).toEqual([
      ['a.txt', 'x big'],
      ['b.txt', 'x small'],
    ])
    // Every read ahead was capped below readStreamMinSize; the big file went to the stream.
    expect(fs.wholeReads).toEqual([1023, 1023])
    expect(fs.streamed).toEqual(['/w/a.txt'])
  })

  it('searchConcurrency is a positive integer of at most 64', () => {
    const fs = new MemoryFileSystem()
    expect(DEFAULT_CONFIG.searchConcurrency).toBe(8)
    expect(() => createFileToolsByName({ fs, config: { searchConcurrency: 0 } })).toThrow(RangeError)
    expect(() => createFileToolsByName({ fs, config: { searchConcurrency: 65 } })).toThrow(/at most 64/)
    expect(() => createFileToolsByName({ fs, config: { searchConcurrency: 1.5 } })).toThrow(RangeError)
    expect(createFileToolsByName({ fs, config: { searchConcurrency: 64 } }).grep.name).toBe('grep')
  })
})

describe('inOrder', () => {
  const later = <T>(value: T, ms: number): Promise<T> => new Promise((resolve) => setTimeout(() => resolve(value), ms))

  it('hands results back in input order, whatever order they settle in', async () => {
    const delays = [30, 5, 20, 1, 10, 0]
    expect(await mapInOrder(delays, 3, (ms) => later(ms, ms))).toEqual(delays)
  })

  it('admit holds items back, but always lets one through; release is called once per item', async () => {
    const sizes = [5, 5, 20, 1, 1, 1]
    let held = 0
    let most = 0
    const released: number[] = []
    const out: number[] = []
    const options = {
      admit: (size: number) => held + size <= 10,
      beforeStart: (size: number) => {
        held += size
        most = Math.max(most, held)
      },
      release: (size: number) => {
        held -= size
        released.push(size)
      },
    }
    for await (const r of inOrder(sizes, 8, (size) => later(size, 1), options)) if (r.ok) out.push(r.value)
    expect(out).toEqual(sizes)
    expect(released).toEqual(sizes)
    expect(most).toBe(20) // the 20 went alone: nothing else was held with it
    expect(held).toBe(0)
  })

  it('a failure is handed back in its place; a throwing beforeStart ends the run without unhandled rejections', async () => {
    const results = []
    for await (const r of inOrder([1, 2, 3], 3, (n) => (n === 2 ? Promise.reject(new Error('two')) : later(n, 1)))) results.push(r)
    expect(results.map((r) => (r.ok ? r.value : (r.error as Error).message))).toEqual([1, 'two', 3])
    let starts = 0
    const run = mapInOrder(
      [1, 2, 3, 4],
      2,
      (n) => (n === 1 ? Promise.reject(new Error('first')) : later(n, 5)),
      () => {
        if (++starts > 3) throw new Error('budget')
      },
    )
    await expect(run).rejects.toThrow('first')
    const sync = mapInOrder([1], 1, () => {
      throw new Error('sync')
    })
    await expect(sync).rejects.toThrow('sync')
  })
})

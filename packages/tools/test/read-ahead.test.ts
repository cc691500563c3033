/**
 * grep reads ahead: its first reads start while the walk still lists directories (as it finds their
 * files), the walk and the reads together keep at most `searchConcurrency` calls in flight, and the
 * answer is the one-at-a-time answer.
 */
import { describe, expect, it } from 'vitest'
import type { FsDirEntry, FsTarget } from '@seamfs/core'
import type { ReadRequest } from '@seamfs/core/backend'
import { MemoryFileSystem } from '@seamfs/backend-memory'
import { createFileToolsByName } from '@seamfs/tools'

/** Memory, with listings of `/w/slow…` held until `release()`, and a log of what started when (listings and reads, at their hooks). */
class Staged extends MemoryFileSystem {
  readonly log: string[] = []
  inFlight = 0
  maxInFlight = 0
  #release: () => void = () => undefined
  readonly #released = new Promise<void>((resolve) => (this.#release = resolve))

  release(): void {
    this.#release()
  }

  async #counted<T>(what: string, body: () => Promise<T>): Promise<T> {
    this.log.push(what)
    this.maxInFlight = Math.max(this.maxInFlight, ++this.inFlight)
    try {
      await new Promise((resolve) => setImmediate(resolve))
      return await body()
    } finally {
      this.inFlight--
    }
  }

  protected override listEntries(target: FsTarget): Promise<FsDirEntry[]> {
    return this.#counted(`list ${target.displayPath}`, async () => {
      if (target.displayPath.startsWith('/w/slow')) await this.#released
      return super.listEntries(target)
    })
  }

  protected override loadBytes(target: FsTarget, request: ReadRequest): Promise<Uint8Array> {
    return this.#counted(`read ${target.displayPath}`, async () => super.loadBytes(target, request))
  }
}

const files = (): Record<string, string> => {
  const out: Record<string, string> = {}
  for (let i = 0; i < 6; i++) out[`fast/f${i}.txt`] = i % 2 === 0 ? 'x\n' : 'no\n'
  for (let i = 0; i < 6; i++) out[`slow/s${i}.txt`] = 'x\n'
  return out
}

describe('grep reads ahead of its walk', () => {
  it('reads the files found while a listing is still pending, within searchConcurrency calls', async () => {
    const fs = new Staged({ cwd: '/w', files: files() })
    const grep = createFileToolsByName({ fs, cwd: '/w', config: { searchConcurrency: 3 }, sandbox: false }).grep.execute({ pattern: 'x' })
    // Let the walk list `fast` and start its reads while `slow`'s listing waits.
    for (let i = 0; i < 50 && !fs.log.some((l) => l.startsWith('read /w/fast')); i++) await new Promise((resolve) => setImmediate(resolve))
    expect(fs.log.filter((l) => l.startsWith('read /w/fast')).length, fs.log.join('\n')).toBeGreaterThan(0)
    expect(fs.log).not.toContain('read /w/slow/s0.txt')
    fs.release()
    const result = await grep
    expect(result.value?.totalMatches).toBe(9)
    expect(fs.maxInFlight).toBeLessThanOrEqual(3)
    const seq = new Staged({ cwd: '/w', files: files() })
    seq.release()
    expect(result).toEqual(await createFileToolsByName({ fs: seq, cwd: '/w', config: { searchConcurrency: 1 }, sandbox: false }).grep.execute({ pattern: 'x' }))
  })

  it('a walk that fails after reads started fails grep with the walk error, the reads dropped', async () => {
    class Failing extends Staged {
      protected override listEntries(target: FsTarget): Promise<FsDirEntry[]> {
        if (target.displayPath === '/w/slow') return Promise.reject(new Error('listing failed'))
        return super.listEntries(target)
      }
    }
    const fs = new Failing({ cwd: '/w', files: files() })
    const result = await createFileToolsByName({ fs, cwd: '/w', config: { searchConcurrency: 3 }, sandbox: false }).grep.execute({ pattern: 'x' })
    expect(result.isError).toBe(true)
    expect(result.text).toContain('listing failed')
  })
})

describe('inOrder with a lookahead', () => {
  it('a call that settles starts the next at once, behind a head still running, up to the lookahead', async () => {
    const { inOrder } = await import('../src/bounded.js')
    let releaseHead: () => void = () => undefined
    const head = new Promise<void>((resolve) => (releaseHead = resolve))
    const started: number[] = []
    const run = (lookahead: number): AsyncGenerator<unknown> =>
      inOrder(
        [0, 1, 2, 3, 4, 5],
        2,
        async (n) => {
          started.push(n)
          if (n === 0) await head
          return n
        },
        { lookahead },
      )
    const results = run(4)
    const first = results.next()
    for (let i = 0; i < 20; i++) await new Promise((resolve) => setImmediate(resolve))
    // Item 0 holds its slot; the other slot ran 1, 2, 3 one after another: 4 started, the lookahead.
    expect(started).toEqual([0, 1, 2, 3])
    releaseHead()
    await first
    for await (const _ of results) void _
    expect(started).toEqual([0, 1, 2, 3, 4, 5])
    started.length = 0
    const plain = run(2)
    const next = plain.next()
    for (let i = 0; i < 20; i++) await new Promise((resolve) => setImmediate(resolve))
    expect(started).toEqual([0, 1])
    void next
  })
})

import { constants as bufferConstants } from 'node:buffer'
import { describe, expect, it } from 'vitest'
import {
  FileSystem,
  FsError,
  FsTargetKey,
  FsVersion,
  isFsError,
  type ByteChunks,
  type ErrorRow,
  type FsCapabilities,
  type FsDirEntry,
  type FsErrorCode,
  type FsInfo,
  type FsLimits,
  type FsTarget,
  type ReadRequest,
  type UpdateRequest,
  type WriteRequest,
  type WriteResult,
} from '@seamfs/core/backend'

const CAPS: FsCapabilities = {
  symlinks: false,
  permissions: false,
  processPath: false,
  createIfAbsent: 'atomic',
  replaceIfVersion: 'atomic',
  versionSource: 'generation',
  newlineInNames: true,
  emptyDirectories: true,
}

type Hooks = Partial<{
  loadBytes: (target: FsTarget, request: ReadRequest) => Promise<Uint8Array>
  openBytes: (target: FsTarget, signal: AbortSignal | undefined) => Promise<ByteChunks>
  listEntries: () => Promise<FsDirEntry[]>
  statTarget: () => Promise<FsInfo | undefined>
  publishBytes: (target: FsTarget, bytes: Uint8Array, request: WriteRequest) => Promise<WriteResult>
  updateBytes: (target: FsTarget, request: UpdateRequest, transform: (bytes: Uint8Array) => Uint8Array) => Promise<FsVersion>
}>

/** A backend whose hooks a test scripts; it counts the hook calls. Raw errors with `errno` map through its table. */
class ScriptedFileSystem extends FileSystem {
  override readonly capabilities = CAPS
  calls = 0
  readonly #hooks: Hooks

  constructor(hooks: Hooks, limits?: FsLimits) {
    super(limits)
    this.#hooks = hooks
  }

  override fileUrl(target: FsTarget): string {
    return `x:${target.targetKey}`
  }

  override contains(): boolean {
    return false
  }

  protected override async resolvePath(path: string): Promise<FsTarget> {
    return { targetKey: FsTargetKey(path), displayPath: path }
  }

  protected override statTarget(): Promise<FsInfo | undefined> {
    return this.#hook('statTarget')()
  }

  protected override async lstatPath(): Promise<undefined> {
    throw Object.assign(new Error('raw'), { errno: 'ENOTDIR' })
  }

  protected override loadBytes(target: FsTarget, request: ReadRequest): Promise<Uint8Array> {
    return this.#hook('loadBytes')(target, request)
  }

  protected override openBytes(target: FsTarget, signal: AbortSignal | undefined): Promise<ByteChunks> {
    return this.#hook('openBytes')(target, signal)
  }

  protected override listEntries(): Promise<FsDirEntry[]> {
    return this.#hook('listEntries')()
  }

  protected override publishBytes(target: FsTarget, bytes: Uint8Array, request: WriteRequest): Promise<WriteResult> {
    return this.#hook('publishBytes')(target, bytes, request)
  }

  protected override updateBytes(target: FsTarget, request: UpdateRequest, transform: (bytes: Uint8Array) => Uint8Array): Promise<FsVersion> {
    return this.#hook('updateBytes')(target, request, transform)
  }

  protected override errorRow(err: unknown): ErrorRow | undefined {
    const errno = (err as { errno?: unknown }).errno
    if (errno === 'ENOTDIR') return { code: 'FS_NOT_FOUND', reason: 'not a directory on the way' }
    if (errno === 'EIO') return { code: 'FS_IO_ERROR', reason: 'i/o error', retryable: true }
    return undefined
  }

  #hook<K extends keyof Hooks>(name: K): NonNullable<Hooks[K]> {
    this.calls++
    const hook = this.#hooks[name]
    if (hook === undefined) throw new Error(`hook ${name} not scripted`)
    return hook
  }
}

const target: FsTarget = { targetKey: FsTargetKey('/f.txt'), displayPath: '/f.txt' }
const utf8 = (text: string): Uint8Array => new TextEncoder().encode(text)

async function codeOf(pending: Promise<unknown>): Promise<FsErrorCode | 'ok'> {
  try {
    await pending
    return 'ok'
  } catch (err) {
    if (!isFsError(err)) throw err
    return err.code
  }
}

/** Chunks that record whether they were released. */
function trackedChunks(chunks: Uint8Array[], fail?: Error): { source: AsyncIterable<Uint8Array>; released: () => boolean } {
  let released = false
  let i = 0
  const iterator: AsyncIterator<Uint8Array> = {
    next: async () => {
      if (i < chunks.length) return { done: false, value: chunks[i++] as Uint8Array }
      if (fail !== undefined) throw fail
      return { done: true, value: undefined }
    },
    return: async () => {
      released = true
      return { done: true, value: undefined }
    },
  }
  return { source: { [Symbol.asyncIterator]: () => iterator }, released: () => released }
}

describe('FileSystem (template methods over hooks)', () => {
  it('translates a raw hook error through the backend table, with the verb and the path', async () => {
    const fs = new ScriptedFileSystem({ loadBytes: () => Promise.reject(Object.assign(new Error('raw'), { errno: 'EIO' })) })
    const err = await fs.readText(target).catch((e: unknown) => e)
    expect(isFsError(err, 'FS_IO_ERROR')).toBe(true)
    expect((err as FsError).message).toBe('cannot read "/f.txt": i/o error')
    expect((err as FsError).retryable).toBe(true)
  })

  it('stat and lstat: FS_NOT_FOUND from a hook (raw or FsError) is undefined', async () => {
    const fs = new ScriptedFileSystem({ statTarget: () => Promise.reject(FsError.throughFile('stat', '/f.txt')) })
    expect(await fs.stat(target)).toBeUndefined()
    expect(await fs.lstat('/a/b')).toBeUndefined()
  })

  it('rejects malformed input before any hook runs', async () => {
    const fs = new ScriptedFileSystem({})
    expect(await codeOf(fs.readText({ targetKey: 1 } as unknown as FsTarget))).toBe('FS_NOT_FOUND')
    expect(await codeOf(fs.writeText(target, 'x', { expected: { kind: 'sometimes' } as never }))).toBe('FS_UNSUPPORTED')
    expect(await codeOf(fs.writeText(target, 7 as unknown as string))).toBe('FS_NOT_TEXT')
    expect(await codeOf(fs.editText(target, { oldString: '', newString: 'x', replaceAll: false }))).toBe('FS_EDIT_NOT_FOUND')
    expect(await codeOf(fs.editText(target, { oldString: 'a', newString: 'b', replaceAll: false }, { expected: { v: 1 } as never }))).toBe('FS_UNSUPPORTED')
    expect(await codeOf(fs.resolve('a', { cwd: 'x\0y' }))).toBe('FS_NOT_FOUND')
    expect(fs.calls).toBe(0)
  })

  it('an already aborted signal is FS_ABORTED before any hook runs', async () => {
    const fs = new ScriptedFileSystem({})
    const signal = AbortSignal.abort('stop')
    for (const pending of [fs.readText(target, { signal }), fs.listDir(target, { signal }), fs.writeText(target, 'x', { signal })]) {
      expect(await codeOf(pending)).toBe('FS_ABORTED')
    }
    expect(fs.calls).toBe(0)
  })

  it('sorts listings by code point whatever order the hook returns', async () => {
    const entry = (name: string): FsDirEntry => ({ name, type: 'file', target })
    const fs = new ScriptedFileSystem({ listEntries: async () => ['b', '\u{1F600}', 'B', '\uFF5E', 'a'].map(entry) })
    expect((await fs.listDir(target)).map((e) => e.name)).toEqual(['B', 'a', 'b', '\uFF5E', '\u{1F600}'])
  })

  it('readText: bytes above maxTextBytes from a careless hook are still FS_TOO_LARGE', async () => {
    const fs = new ScriptedFileSystem({ loadBytes: async () => utf8('x'.repeat(11)) }, { maxTextBytes: 10 })
    const err = await fs.readText(target).catch((e: unknown) => e)
    expect(isFsError(err, 'FS_TOO_LARGE')).toBe(true)
    expect((err as FsError).details).toEqual({ size: 11, limit: 10 })
  })

  it('the limits are validated and never exceed one JavaScript string', () => {
    expect(new ScriptedFileSystem({}).maxTextBytes).toBe(256 * 1024 * 1024)
    expect(new ScriptedFileSystem({}, { maxTextBytes: Number.MAX_SAFE_INTEGER }).maxTextBytes).toBe(bufferConstants.MAX_STRING_LENGTH)
    expect(() => new ScriptedFileSystem({}, { maxTextBytes: -1 })).toThrow(RangeError)
    expect(() => new ScriptedFileSystem({}, { diffBasisMaxBytes: 1.5 })).toThrow(RangeError)
  })

  it('editText: a hook that publishes without calling transform is an FS_IO_ERROR, never a success', async () => {
    const fs = new ScriptedFileSystem({ updateBytes: async () => FsVersion('v2') })
    expect(await codeOf(fs.editText(target, { oldString: 'a', newString: 'b', replaceAll: false }))).toBe('FS_IO_ERROR')
  })

  it('editText: the transform refuses a result above maxTextBytes, so nothing is published', async () => {
    let published = false
    const fs = new ScriptedFileSystem(
      {
        updateBytes: async (_t, _r, transform) => {
          transform(utf8('abc'))
          published = true
          return FsVersion('v2')
        },
      },
      { maxTextBytes: 5 },
    )
    expect(await codeOf(fs.editText(target, { oldString: 'b', newString: 'bbbbb', replaceAll: false }))).toBe('FS_TOO_LARGE')
    expect(published).toBe(false)
  })

  it('writeText: before is decoded only up to diffBasisMaxBytes, without BOM, LF-normalized', async () => {
    const before = Uint8Array.of(0xef, 0xbb, 0xbf, ...utf8('a\r\nb'))
    const fs = (limit: number): ScriptedFileSystem =>
      new ScriptedFileSystem({ publishBytes: async () => ({ created: false, version: FsVersion('v'), before }) }, { diffBasisMaxBytes: limit })
    expect((await fs(100).writeText(target, 'x\r\n')).before).toBe('a\nb')
    expect((await fs(100).writeText(target, 'x\r\n')).after).toBe('x\n')
    expect((await fs(3).writeText(target, 'x')).before).toBeNull()
  })

  it('writeText before: false: the hook is asked for no previous bytes, the outcome has none; a non-boolean is refused', async () => {
    const asked: number[] = []
    const fs = new ScriptedFileSystem({
      publishBytes: async (_t, _b, request) => {
        asked.push(request.beforeMaxBytes)
        return { created: false, version: FsVersion('v'), before: utf8('old') }
      },
    })
    const outcome = await fs.writeText(target, 'new', { before: false })
    expect(outcome).toEqual({ operation: 'update', version: 'v', before: null, after: 'new' })
    expect((await fs.writeText(target, 'new', { before: true })).before).toBe('old')
    expect((await fs.writeText(target, 'new')).before).toBe('old')
    expect(asked).toEqual([0, fs.diffBasisMaxBytes, fs.diffBasisMaxBytes])
    expect(await codeOf(fs.writeText(target, 'new', { before: 'no' as never }))).toBe('FS_UNSUPPORTED')
    expect(asked).toHaveLength(3)
  })

  it('streamText: the iterator error is translated; stopping early and an abort during open release the source', async () => {
    const failing = trackedChunks([utf8('ab')], Object.assign(new Error('raw'), { errno: 'EIO' }))
    const fs1 = new ScriptedFileSystem({ openBytes: async () => failing.source })
    const seen: string[] = []
    const err = await (async () => {
      for await (const chunk of await fs1.streamText(target)) seen.push(chunk)
    })().catch((e: unknown) => e)
    expect(seen).toEqual(['ab'])
    expect(isFsError(err, 'FS_IO_ERROR')).toBe(true)

    const early = trackedChunks([utf8('a'), utf8('b'), utf8('c')])
    const fs2 = new ScriptedFileSystem({ openBytes: async () => early.source })
    for await (const chunk of await fs2.streamText(target)) {
      expect(chunk).toBe('a')
      break
    }
    expect(early.released()).toBe(true)

    const controller = new AbortController()
    const opened = trackedChunks([utf8('a')])
    const fs3 = new ScriptedFileSystem({
      openBytes: async () => {
        controller.abort('late')
        return opened.source
      },
    })
    expect(await codeOf(fs3.streamText(target, { signal: controller.signal }))).toBe('FS_ABORTED')
    expect(opened.released()).toBe(true)
  })

  it('streamText: an abort between chunks is FS_ABORTED and releases the source', async () => {
    const controller = new AbortController()
    const chunks = trackedChunks([utf8('a'), utf8('b'), utf8('c')])
    const fs = new ScriptedFileSystem({ openBytes: async () => chunks.source })
    const seen: string[] = []
    const err = await (async () => {
      for await (const chunk of await fs.streamText(target, { signal: controller.signal })) {
        seen.push(chunk)
        controller.abort('stop')
      }
    })().catch((e: unknown) => e)
    expect(seen).toEqual(['a'])
    expect(isFsError(err, 'FS_ABORTED')).toBe(true)
    expect(chunks.released()).toBe(true)
  })
})

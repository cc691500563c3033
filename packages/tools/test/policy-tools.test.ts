/**
 * The read-before-write policy as the model meets it through the tools, on
 * the memory and the local backend: which calls authorize which, the remedies
 * appended to refusals, and streamed reads of large files.
 */
import fc from 'fast-check'
import { afterEach, describe, expect, it, vi } from 'vitest'
import type { FsInfo, FsTarget } from '@seamfs/core'
import type { OpenedFile } from '@seamfs/core/backend'
import { createFileTools, ObservationPolicy, type FileTool, type ToolsConfig } from '@seamfs/tools'
import { ByteLineWindow } from '../src/line-scan.js'
import { ChunkReader } from '../src/read-window.js'
import { BACKENDS, expectError, expectOk, makeHarness, type BackendKind, type Harness, type HarnessOptions } from './tool-harness.js'

const S = { session: 'session-1' }
const OBSERVE = ' — read the file, then retry'
const REREAD = ' — re-read the file, then retry'
const LINES = Array.from({ length: 12 }, (_, i) => `line ${i + 1}`).join('\n') + '\n'

describe.each(BACKENDS)('policy through the tools on %s', (kind: BackendKind) => {
  let harness: Harness | undefined
  afterEach(() => {
    harness?.dispose()
    harness = undefined
    vi.restoreAllMocks()
  })
  const setup = (options: HarnessOptions = {}): Harness =>
    (harness = makeHarness(kind, { policy: new ObservationPolicy(), files: { 'a.txt': LINES, 'b.txt': 'bee\n' }, ...options }))
  const created = (h: Harness, rel: string): string => `<path>${h.abs(rel)}</path>\n<type>file</type>\n<content>\nCreated file\n</content>`
  /** The update envelope up to its diff (the diff itself is golden-tested in edit-diff.test.ts). */
  const updated = (h: Harness, rel: string): string => `<path>${h.abs(rel)}</path>\n<type>file</type>\n<content>\nUpdated file\n\n@@`
  const upTo = (text: string, prefix: string): string => text.slice(0, prefix.length)
  const blind = (h: Harness, rel: string): string => `Error: cannot overwrite existing "${h.abs(rel)}" without reading it first${OBSERVE}`
  const unread = (h: Harness, rel: string): string => `Error: edit requires reading "${h.abs(rel)}" first${OBSERVE}`

  it('a blind overwrite is refused with FS_NOT_OBSERVED and the read remedy; the file is untouched', async () => {
    const h = setup()
    const result = await h.call('write', { file_path: 'a.txt', content: 'clobbered' }, S)
    expectError(result, blind(h, 'a.txt'), 'FS_NOT_OBSERVED')
    expect(result.text.endsWith(OBSERVE)).toBe(true)
    expect(h.peek('a.txt')).toBe(LINES)
  })

  it('an edit of an unread file is refused with FS_NOT_OBSERVED and the read remedy', async () => {
    const h = setup()
    expectError(await h.call('edit', { file_path: 'a.txt', old_string: 'line 1\n', new_string: 'first\n' }, S), unread(h, 'a.txt'), 'FS_NOT_OBSERVED')
    expect(h.peek('a.txt')).toBe(LINES)
  })

  it('an edit of a file that does not exist is FS_NOT_FOUND, read or not, policy or not (reading first could not help)', async () => {
    const notFound = (h: Harness, rel: string): string => `Error: cannot edit "${h.abs(rel)}": not found`
    for (const policy of [new ObservationPolicy(), undefined]) {
      const h = makeHarness(kind, { policy, files: { 'a.txt': LINES } })
      for (const rel of ['missing.txt', 'no/such/dir/missing.txt']) {
        expectError(await h.call('edit', { file_path: rel, old_string: 'a', new_string: 'b' }, S), notFound(h, rel), 'FS_NOT_FOUND')
        // A read that found nothing (recorded absent) changes nothing of that.
        expect((await h.call('read', { file_path: rel }, S)).code).toBe('FS_NOT_FOUND')
        expectError(await h.call('edit', { file_path: rel, old_string: 'a', new_string: 'b' }, S), notFound(h, rel), 'FS_NOT_FOUND')
      }
      expect(h.peek('missing.txt')).toBeUndefined()
      h.dispose()
    }
    // A file read and then deleted behind the session's back is still stale: re-reading is the remedy.
    const h = setup()
    expectOk(await h.call('read', { file_path: 'b.txt' }, S))
    h.remove('b.txt')
    const gone = await h.call('edit', { file_path: 'b.txt', old_string: 'bee', new_string: 'b' }, S)
    expectError(gone, `Error: cannot edit "${h.abs('b.txt')}": file no longer exists${REREAD}`, 'FS_STALE_VERSION')
  })

  it('a read authorizes a write, and the write authorizes the next edit and write', async () => {
    const h = setup()
    expectOk(await h.call('read', { file_path: 'a.txt' }, S))
    const w1 = expectOk(await h.call('write', { file_path: 'a.txt', content: 'one\ntwo\n' }, S))
    expect(upTo(w1, updated(h, 'a.txt'))).toBe(updated(h, 'a.txt'))
    expectOk(await h.call('edit', { file_path: 'a.txt', old_string: 'two', new_string: 'TWO' }, S))
    const w2 = expectOk(await h.call('write', { file_path: 'a.txt', content: 'three\n' }, S))
    expect(upTo(w2, updated(h, 'a.txt'))).toBe(updated(h, 'a.txt'))
    expect(h.peek('a.txt')).toBe('three\n')
  })

  it('a read authorizes an edit', async () => {
    const h = setup()
    expectOk(await h.call('read', { file_path: 'b.txt' }, S))
    expect(expectOk(await h.call('edit', { file_path: 'b.txt', old_string: 'bee', new_string: 'wasp' }, S))).toBe(
      `The file ${h.abs('b.txt')} has been updated successfully.\n\n@@ -1 +1 @@\n-bee\n+wasp`,
    )
    expect(h.peek('b.txt')).toBe('wasp\n')
  })

  it('a windowed read of any part of the file authorizes write and edit', async () => {
    const h = setup()
    expect((await h.call('read', { file_path: 'a.txt', offset: 11, limit: 1 }, S)).value).toMatchObject({ lines: [{ number: 11, text: 'line 11' }] })
    expectOk(await h.call('edit', { file_path: 'a.txt', old_string: 'line 2\n', new_string: 'second\n' }, S))
    expectOk(await h.call('write', { file_path: 'a.txt', content: 'replaced\n' }, S))
    expect(h.peek('a.txt')).toBe('replaced\n')
  })

  it('after an external change both write and edit are stale (FS_STALE_VERSION, re-read remedy); a re-read unblocks', async () => {
    const h = setup()
    expectOk(await h.call('read', { file_path: 'a.txt' }, S))
    h.put('a.txt', 'changed behind the tools\n')
    const write = await h.call('write', { file_path: 'a.txt', content: 'mine\n' }, S)
    expectError(write, `Error: cannot write "${h.abs('a.txt')}": file changed since it was read${REREAD}`, 'FS_STALE_VERSION')
    expect(write.text.endsWith(REREAD)).toBe(true)
    const edit = await h.call('edit', { file_path: 'a.txt', old_string: 'behind', new_string: 'in front of' }, S)
    expectError(edit, `Error: cannot edit "${h.abs('a.txt')}": file changed since it was read${REREAD}`, 'FS_STALE_VERSION')
    expect(h.peek('a.txt')).toBe('changed behind the tools\n')
    // the remedy: re-read, then retry
    expectOk(await h.call('read', { file_path: 'a.txt' }, S))
    expectOk(await h.call('edit', { file_path: 'a.txt', old_string: 'behind', new_string: 'in front of' }, S))
    expectOk(await h.call('write', { file_path: 'a.txt', content: 'mine\n' }, S))
    expect(h.peek('a.txt')).toBe('mine\n')
  })

  it('a file deleted after the read is stale too', async () => {
    const h = setup()
    expectOk(await h.call('read', { file_path: 'b.txt' }, S))
    h.remove('b.txt')
    expectError(
      await h.call('write', { file_path: 'b.txt', content: 'x' }, S),
      `Error: cannot write "${h.abs('b.txt')}": file no longer exists${REREAD}`,
      'FS_STALE_VERSION',
    )
    expect(h.peek('b.txt')).toBeUndefined()
  })

  it('creating a new file needs no read, and authorizes the next overwrite', async () => {
    const h = setup()
    expect(expectOk(await h.call('write', { file_path: 'sub/new.txt', content: 'v1\n' }, S))).toBe(created(h, 'sub/new.txt'))
    const w3 = expectOk(await h.call('write', { file_path: 'sub/new.txt', content: 'v2\n' }, S))
    expect(upTo(w3, updated(h, 'sub/new.txt'))).toBe(updated(h, 'sub/new.txt'))
    expectOk(await h.call('edit', { file_path: 'sub/new.txt', old_string: 'v2', new_string: 'v3' }, S))
    expect(h.peek('sub/new.txt')).toBe('v3\n')
  })

  it('a listing does not authorize', async () => {
    const h = setup()
    expect(expectOk(await h.call('list', {}, S))).toContain('a.txt')
    expectError(await h.call('write', { file_path: 'a.txt', content: 'x' }, S), blind(h, 'a.txt'), 'FS_NOT_OBSERVED')
    expectError(await h.call('edit', { file_path: 'a.txt', old_string: 'line 1', new_string: 'x' }, S), unread(h, 'a.txt'), 'FS_NOT_OBSERVED')
  })

  it('failed reads (offset out of range, binary, directory) do not authorize', async () => {
    const h = setup({ files: { 'a.txt': LINES, bin: 'a\0b' } })
    expect((await h.call('read', { file_path: 'a.txt', offset: 99 }, S)).code).toBe('FS_NOT_FOUND')
    expectError(await h.call('write', { file_path: 'a.txt', content: 'x' }, S), blind(h, 'a.txt'), 'FS_NOT_OBSERVED')
    expect((await h.call('read', { file_path: 'bin' }, S)).code).toBe('FS_NOT_TEXT')
    expectError(await h.call('write', { file_path: 'bin', content: 'x' }, S), blind(h, 'bin'), 'FS_NOT_OBSERVED')
  })

  it('a read that finds nothing lets the write create; an edit of it is not found; someone else creating it first wins', async () => {
    const h = setup()
    expectError(await h.call('read', { file_path: 'later.txt' }, S), `Error: cannot read "${h.abs('later.txt')}": not found`, 'FS_NOT_FOUND')
    expectError(
      await h.call('edit', { file_path: 'later.txt', old_string: 'a', new_string: 'b' }, S),
      `Error: cannot edit "${h.abs('later.txt')}": not found`,
      'FS_NOT_FOUND',
    )
    expect(expectOk(await h.call('write', { file_path: 'later.txt', content: 'made\n' }, S))).toBe(created(h, 'later.txt'))
    expectError(await h.call('read', { file_path: 'race.txt' }, S), `Error: cannot read "${h.abs('race.txt')}": not found`, 'FS_NOT_FOUND')
    h.put('race.txt', 'theirs\n')
    expectError(await h.call('write', { file_path: 'race.txt', content: 'mine\n' }, S), blind(h, 'race.txt'), 'FS_NOT_OBSERVED')
    expect(h.peek('race.txt')).toBe('theirs\n')
  })

  it("observations belong to a session; a call without a session uses the tools' default session", async () => {
    const h = setup()
    expectOk(await h.call('read', { file_path: 'a.txt' }, S))
    expectError(await h.call('write', { file_path: 'a.txt', content: 'x' }, { session: 'session-2' }), blind(h, 'a.txt'), 'FS_NOT_OBSERVED')
    // the default session is a session of its own: S's read does not count for it, nor its read for S
    expectError(await h.call('write', { file_path: 'a.txt', content: 'x' }), blind(h, 'a.txt'), 'FS_NOT_OBSERVED')
    expectOk(await h.call('read', { file_path: 'b.txt' }))
    expectOk(await h.call('edit', { file_path: 'b.txt', old_string: 'bee', new_string: 'wasp' }))
    expectError(await h.call('edit', { file_path: 'b.txt', old_string: 'wasp', new_string: 'x' }, S), unread(h, 'b.txt'), 'FS_NOT_OBSERVED')
    expect(expectOk(await h.call('write', { file_path: 'anon.txt', content: 'x' }))).toBe(created(h, 'anon.txt'))
    expect([h.peek('a.txt'), h.peek('b.txt')]).toEqual([LINES, 'wasp\n'])
  })

  it('without a policy, writes and edits are unconditional', async () => {
    const h = setup({ policy: undefined })
    const w4 = expectOk(await h.call('write', { file_path: 'a.txt', content: 'blind\n' }, S))
    expect(upTo(w4, updated(h, 'a.txt'))).toBe(updated(h, 'a.txt'))
    expectOk(await h.call('edit', { file_path: 'b.txt', old_string: 'bee', new_string: 'wasp' }))
    expectOk(await h.call('read', { file_path: 'a.txt' }, S))
    h.put('a.txt', 'external\n')
    expectOk(await h.call('write', { file_path: 'a.txt', content: 'over\n' }, S))
    expect([h.peek('a.txt'), h.peek('b.txt')]).toEqual(['over\n', 'wasp\n'])
  })

  describe('streamed reads (readStreamMinSize 64)', () => {
    const BIG = Array.from({ length: 40 }, (_, i) => `row ${String(i + 1).padStart(2, '0')} ${'é'.repeat(i % 5)}`).join('\r\n')
    const tool = (h: Harness, config: Partial<ToolsConfig>, policy?: ObservationPolicy): FileTool =>
      // Spied on its own methods: no fence in between (a fence calls the backend's hooks).
      createFileTools({ fs: h.fs, policy, config, sandbox: false }).find((t) => t.name === 'read') as FileTool

    it('a file at or above the threshold streams, and returns the same window as a whole-file read', async () => {
      const h = setup({ files: { 'big.txt': BIG, 'edge.txt': 'x'.repeat(63) + '\n', 'small.txt': 'x'.repeat(62) + '\n' } })
      // Every read opens the file once (openFile); a streamed read takes its chunks one at a time (`rest`) into
      // the byte window; a whole-file read decodes the file at once (from `all`, or from the bytes the store
      // handed over at the open) and cuts the text window from it: no chunk reads, no byte window.
      const streamText = vi.spyOn(ChunkReader.prototype, 'rest')
      const byteWindow = vi.spyOn(ByteLineWindow.prototype, 'push')
      const lanes = (): [boolean, boolean] => [streamText.mock.calls.length > 0, byteWindow.mock.calls.length > 0]
      const streaming = tool(h, { readStreamMinSize: 64, readMaxBytes: 120 })
      const whole = tool(h, { readMaxBytes: 120 })
      for (const args of [{}, { offset: 7, limit: 5 }, { offset: 38 }, { offset: 40, limit: 1 }, { offset: 41 }]) {
        streamText.mockClear()
        byteWindow.mockClear()
        const streamed = await streaming.execute({ file_path: 'big.txt', ...args })
        expect(lanes()).toEqual([true, true])
        streamText.mockClear()
        byteWindow.mockClear()
        const loaded = await whole.execute({ file_path: 'big.txt', ...args })
        expect(lanes()).toEqual([false, false])
        expect(streamed).toEqual(loaded)
      }
      const window = await streaming.execute({ file_path: 'big.txt', offset: 7, limit: 2 })
      expect(window.text).toBe(
        `<path>${h.abs('big.txt')}</path>\n<type>file</type>\n<content>\n7: row 07 é\n8: row 08 éé\n\n(Showing lines 7-8 of 40. Use offset=9 to continue.)\n</content>`,
      )
      streamText.mockClear()
      byteWindow.mockClear()
      expectOk(await streaming.execute({ file_path: 'edge.txt' })) // 64 bytes: at the threshold
      expect(lanes()).toEqual([true, true])
      streamText.mockClear()
      byteWindow.mockClear()
      expectOk(await streaming.execute({ file_path: 'small.txt' })) // 63 bytes: below
      expect(lanes()).toEqual([false, false])
    })

    it('chunk boundaries anywhere (inside a CRLF, a long line, a surrogate pair) change nothing', async () => {
      const h = setup()
      const config = { readStreamMinSize: 1, readMaxLineLength: 5, readMaxBytes: 60 }
      const streaming = tool(h, config)
      const whole = tool(h, { ...config, readStreamMinSize: 2 ** 40 })
      const content = fc.string({ unit: fc.constantFrom('a', 'é', '😀', '\r', '\n', '\r\n', 'long-line'), maxLength: 60 })
      const cuts = fc.array(fc.integer({ min: 1, max: 7 }), { minLength: 1, maxLength: 8 })
      await fc.assert(
        fc.asyncProperty(content, cuts, fc.integer({ min: 1, max: 12 }), fc.integer({ min: 1, max: 6 }), async (text, sizes, offset, limit) => {
          h.put('chunks.txt', text)
          const bytes = Buffer.from(text, 'utf8')
          // Byte chunks cut anywhere: inside a CRLF, a multi-byte character, a long line.
          const opened = vi.spyOn(h.fs as unknown as { openTarget: (t: FsTarget) => Promise<OpenedFile> }, 'openTarget').mockImplementation(async (t) => ({
            info: (await h.fs.stat(t)) as FsInfo,
            chunks: (async function* () {
              for (let at = 0, i = 0; at < bytes.length; i++) {
                const size = sizes[i % sizes.length] ?? 1
                yield bytes.subarray(at, at + size)
                at += size
              }
            })(),
          }))
          const streamText = vi.spyOn(ChunkReader.prototype, 'rest')
          const streamed = await streaming.execute({ file_path: 'chunks.txt', offset, limit })
          expect(opened).toHaveBeenCalledTimes(1)
          expect(streamText).toHaveBeenCalledTimes(text === '' ? 0 : 1) // an empty file is below any threshold
          opened.mockRestore()
          streamText.mockRestore()
          expect(streamed).toEqual(await whole.execute({ file_path: 'chunks.txt', offset, limit }))
        }),
        { numRuns: kind === 'memory' ? 200 : 50 },
      )
    })

    it('a streamed read authorizes like any read', async () => {
      const policy = new ObservationPolicy()
      const h = setup({ policy, files: { 'big.txt': BIG } })
      const streamText = vi.spyOn(ChunkReader.prototype, 'rest')
      expectOk(await tool(h, { readStreamMinSize: 64 }, policy).execute({ file_path: 'big.txt', offset: 20, limit: 1 }, S))
      expect(streamText).toHaveBeenCalledTimes(1)
      expectOk(await h.call('edit', { file_path: 'big.txt', old_string: 'row 20', new_string: 'ROW 20' }, S))
      expect(h.peek('big.txt')).toBe(BIG.replace('row 20', 'ROW 20'))
    })
  })
})

describe('the policy option of createFileTools', () => {
  it('false means none, as the hosts take it: a blind overwrite goes through', async () => {
    const { MemoryFileSystem } = await import('@seamfs/backend-memory')
    const fs = new MemoryFileSystem({ cwd: '/w', files: { 'a.txt': 'old\n' } })
    const [write] = createFileTools({ fs, policy: false }).filter((t) => t.name === 'write')
    const result = await (write as FileTool).execute({ file_path: 'a.txt', content: 'new\n' })
    expect(result.isError).toBe(false)
    expect(await fs.readText(await fs.resolve('a.txt'))).toBe('new\n')
  })

  it('anything else that is not a policy is a TypeError when the tools are made, not a failure of every write', async () => {
    const { MemoryFileSystem } = await import('@seamfs/backend-memory')
    const fs = new MemoryFileSystem({ cwd: '/w' })
    for (const policy of [true, {}, 'on', null, { writeIntent: () => undefined }]) {
      expect(() => createFileTools({ fs, policy: policy as unknown as ObservationPolicy })).toThrow(/policy must be an ObservationPolicy, false or omitted/)
    }
  })
})

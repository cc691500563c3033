/**
 * The read tool's streamed path (bytes counted, only the window decoded) against its
 * whole-file path (readText), on real files: the same result, text and failure for
 * BOMs, CRLF, lone CRs, invalid or cut UTF-8, NULs in and past the sample; the byte
 * stream keeps the abort rule and a sandbox's read fence.
 */
import { mkdtempSync, realpathSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterEach, describe, expect, it } from 'vitest'
import { isFsError, SandboxedFileSystem } from '@seamfs/core'
import { LocalFileSystem } from '@seamfs/backend-local'
import { createFileTools, type FileTool, type ToolsConfig } from '@seamfs/tools'
import { BACKENDS, makeHarness, type Harness } from './tool-harness.js'

const enc = (s: string): Buffer => Buffer.from(s, 'utf8')
const CONTENTS: Readonly<Record<string, Buffer>> = {
  'bom-crlf.txt': Buffer.concat([Buffer.of(0xef, 0xbb, 0xbf), enc('one\r\ntwo é\r\nthree 😀\r\n\r\nfive')]),
  'lone-cr.txt': enc('a\rb\nc\r\r\n\r'),
  'long-line.txt': enc(`${'😀é'.repeat(40)}\n${'x'.repeat(300)}\r\nshort\n`),
  'double-bom.txt': enc('\uFEFF\uFEFFtext\n'),
  'bad-late.txt': Buffer.concat([enc('line\n'.repeat(3000)), Buffer.of(0xc3, 0x28), enc('\nafter\n')]),
  'cut-last.txt': Buffer.concat([enc('ok\n'.repeat(10)), Buffer.of(0xf0, 0x9f, 0x98)]),
  'nul-early.txt': Buffer.concat([enc('text\n'), Buffer.of(0), enc('more\n')]),
  'nul-late.txt': Buffer.concat([enc('y\n'.repeat(4096)), Buffer.of(0), enc('\nz\n')]),
  'only-bom.txt': Buffer.of(0xef, 0xbb, 0xbf),
  'newlines.txt': enc('\n\n\n'),
}
const WINDOWS = [{}, { offset: 2, limit: 2 }, { offset: 3 }, { offset: 4097, limit: 3 }, { offset: 50 }]

let dirs: string[] = []
afterEach(() => {
  for (const dir of dirs) rmSync(dir, { recursive: true, force: true })
  dirs = []
})

function readTool(h: Harness, config: Partial<ToolsConfig>): FileTool {
  return createFileTools({ fs: h.fs, config }).find((t) => t.name === 'read') as FileTool
}

describe.each(BACKENDS)('streamed read on %s', (kind) => {
  it('returns exactly what the whole-file read returns, failures included', async () => {
    const h = makeHarness(kind)
    try {
      const small = { readMaxLineLength: 20, readMaxBytes: 200 }
      const streaming = readTool(h, { ...small, readStreamMinSize: 1 })
      const whole = readTool(h, { ...small, readStreamMinSize: 2 ** 40 })
      let failures = 0
      for (const [name, bytes] of Object.entries(CONTENTS)) {
        // The memory harness takes text: byte-level cases run on local only.
        if (kind === 'memory') {
          const text = bytes.toString('utf8')
          if (!Buffer.from(text, 'utf8').equals(bytes)) continue
          h.put(name, text)
        } else writeFileSync(h.abs(name), bytes)
        for (const args of WINDOWS) {
          const streamed = await streaming.execute({ file_path: name, ...args })
          expect(streamed, `${name} ${JSON.stringify(args)}`).toStrictEqual(await whole.execute({ file_path: name, ...args }))
          if (streamed.isError) failures++
        }
      }
      // Not only successes were compared: out-of-range offsets everywhere, and non-text files on local.
      expect(failures).toBeGreaterThan(kind === 'local' ? 15 : 5)
    } finally {
      h.dispose()
    }
  })

  it('an aborted read is FS_ABORTED', async () => {
    const h = makeHarness(kind, { files: { 'a.txt': 'x\n'.repeat(100) } })
    try {
      const controller = new AbortController()
      controller.abort()
      const result = await readTool(h, { readStreamMinSize: 1 }).execute({ file_path: 'a.txt' }, { signal: controller.signal })
      expect([result.isError, result.code]).toEqual([true, 'FS_ABORTED'])
    } finally {
      h.dispose()
    }
  })
})

describe('the byte stream the streamed read takes (core streamBytes)', () => {
  it('keeps a sandbox fence: its openBytes hook runs, so a target outside the roots is FS_SANDBOX_DENIED', async () => {
    const inside = realpathSync(mkdtempSync(join(tmpdir(), 'seamfs-in-')))
    const outside = realpathSync(mkdtempSync(join(tmpdir(), 'seamfs-out-')))
    dirs.push(inside, outside)
    writeFileSync(join(outside, 'secret.txt'), 'secret\n')
    writeFileSync(join(inside, 'ok.txt'), 'fine\n')
    const local = new LocalFileSystem({ cwd: inside })
    const fenced = new SandboxedFileSystem(local, { mode: 'read-only', workspaceRoot: inside })
    // A target taken from the unfenced filesystem: only the sandbox's hook stands between it and the bytes.
    const secret = await local.resolve(join(outside, 'secret.txt'))
    const error = await fenced.streamBytes(secret).catch((err: unknown) => err)
    expect(isFsError(error, 'FS_SANDBOX_DENIED')).toBe(true)
    const chunks: Uint8Array[] = []
    for await (const chunk of await fenced.streamBytes(await local.resolve('ok.txt'))) chunks.push(Uint8Array.from(chunk))
    expect(Buffer.concat(chunks).toString('utf8')).toBe('fine\n')
  })

  it('translates a foreign open failure through the backend table', async () => {
    const dir = realpathSync(mkdtempSync(join(tmpdir(), 'seamfs-gone-')))
    dirs.push(dir)
    const local = new LocalFileSystem({ cwd: dir })
    const error = await local.streamBytes(await local.resolve('missing.txt')).catch((err: unknown) => err)
    expect(isFsError(error, 'FS_NOT_FOUND')).toBe(true)
  })
})

/**
 * `read` of an image: PNG, JPEG, GIF and WebP, told by their bytes (not their names), come back
 * as the result's image (base64 + type) with an envelope for text-only hosts, within
 * `readImageMaxBytes`; the read is recorded like a text read. Other binary files fail as before.
 * (Through MCP the image is image content: packages/mcp/test/mcp-image.test.ts.)
 */
import { afterEach, describe, expect, it } from 'vitest'
import { ObservationPolicy } from '@seamfs/core'
import { sniffImage, type ReadValue } from '@seamfs/tools'
import { BACKENDS, expectError, expectOk, makeHarness, readEnvelope, type BackendKind, type Harness, type HarnessOptions } from './tool-harness.js'

const b64 = (text: string): Uint8Array => Uint8Array.from(Buffer.from(text, 'base64'))
/** Real 1×1 images. */
const PNG = b64('iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8BQDwAEhQGAhKmMIQAAAABJRU5ErkJggg==')
const GIF = b64('R0lGODlhAQABAIAAAAAAAP///yH5BAEAAAAALAAAAAABAAEAAAIBRAA7')
const WEBP = b64('UklGRhoAAABXRUJQVlA4TA0AAAAvAAAAEAcQERGIiP4HAA==')
/** A JPEG's start (SOI, APP0 JFIF) and end: enough to be told as one. */
const JPEG = Uint8Array.from([
  0xff, 0xd8, 0xff, 0xe0, 0x00, 0x10, 0x4a, 0x46, 0x49, 0x46, 0x00, 0x01, 0x01, 0x00, 0x00, 0x01, 0x00, 0x01, 0x00, 0x00, 0xff, 0xd9,
])
/** A PNG of `size` bytes (a real signature, padding after it). */
const bigPng = (size: number): Uint8Array => Uint8Array.from({ length: size }, (_, i) => PNG[i] ?? 0)
const S = { session: 's' }

describe('sniffImage: by magic bytes only', () => {
  it.each([
    ['png', PNG, 'image/png'],
    ['jpeg', JPEG, 'image/jpeg'],
    ['gif89a', GIF, 'image/gif'],
    ['gif87a', Uint8Array.from(Buffer.from('GIF87a\x01\x00\x01\x00', 'latin1')), 'image/gif'],
    ['webp', WEBP, 'image/webp'],
    ['a RIFF that is not WebP (WAV)', Uint8Array.from(Buffer.from('RIFF\x24\x00\x00\x00WAVEfmt ', 'latin1')), undefined],
    ['a cut PNG signature', PNG.subarray(0, 7), undefined],
    ['text', Uint8Array.from(Buffer.from('\x89PNG is a format')), undefined],
    ['empty', new Uint8Array(0), undefined],
    ['GIF8 only', Uint8Array.from(Buffer.from('GIF8')), undefined],
  ])('%s', (_label, bytes, expected) => {
    expect(sniffImage(bytes)).toBe(expected)
  })
})

describe.each(BACKENDS)('read of images on %s', (kind: BackendKind) => {
  let harness: Harness | undefined
  afterEach(() => {
    harness?.dispose()
    harness = undefined
  })
  const setup = async (files: Record<string, Uint8Array | string>, options: HarnessOptions = {}): Promise<Harness> => {
    const h = (harness = makeHarness(kind, options))
    for (const [rel, content] of Object.entries(files)) {
      const target = await h.fs.resolve(h.abs(rel))
      if (typeof content === 'string') await h.fs.writeText(target, content)
      else await h.fs.writeBytes(target, content)
    }
    return h
  }
  const envelope = (path: string, mimeType: string, size: number): string =>
    `<path>${path}</path>\n<type>image</type>\n<content>\n(${mimeType}, ${size} bytes, returned as image content)\n</content>`

  it.each([
    ['p.png', PNG, 'image/png'],
    ['p.jpg', JPEG, 'image/jpeg'],
    ['p.gif', GIF, 'image/gif'],
    ['p.webp', WEBP, 'image/webp'],
  ] as const)('%s: the envelope, the image part (base64, type) and the value', async (name, bytes, mimeType) => {
    const h = await setup({ [name]: bytes })
    const result = await h.call('read', { file_path: name })
    expect(expectOk(result)).toBe(envelope(h.abs(name), mimeType, bytes.length))
    expect(result.image).toEqual({ data: Buffer.from(bytes).toString('base64'), mimeType })
    expect(result.value).toEqual({ path: h.abs(name), offset: 1, lines: [], totalLines: 0, image: { mimeType, size: bytes.length } } satisfies ReadValue)
  })

  it('the bytes decide, not the name: an image under any name is an image; text named .png is text', async () => {
    const h = await setup({ 'shot.dat': PNG, noext: GIF, 'fake.png': 'not an image\n', 'x.JPEG': JPEG })
    expect(expectOk(await h.call('read', { file_path: 'shot.dat' }))).toBe(envelope(h.abs('shot.dat'), 'image/png', PNG.length))
    expect((await h.call('read', { file_path: 'noext' })).image?.mimeType).toBe('image/gif')
    expect((await h.call('read', { file_path: 'x.JPEG' })).image?.mimeType).toBe('image/jpeg')
    const text = await h.call('read', { file_path: 'fake.png' })
    expect(expectOk(text)).toBe(readEnvelope(h.abs('fake.png'), ['1: not an image'], '(End of file - total 1 lines)'))
    expect(text.image).toBeUndefined()
  })

  it('an image past readStreamMinSize (the streamed text path) is still an image', async () => {
    const h = await setup({ 'big.bin': bigPng(300) }, { config: { readStreamMinSize: 64 } })
    const result = await h.call('read', { file_path: 'big.bin' })
    expect(expectOk(result)).toBe(envelope(h.abs('big.bin'), 'image/png', 300))
    expect(Buffer.from(result.image?.data ?? '', 'base64')).toEqual(Buffer.from(bigPng(300)))
  })

  it('other binary files fail as before (FS_NOT_TEXT), whatever their name', async () => {
    const h = await setup({
      'x.bin': Uint8Array.of(1, 0, 2),
      'x.png': Uint8Array.of(1, 0, 2),
      'x.gif': Uint8Array.from(Buffer.from('RIFF\0\0\0\0WAVE', 'latin1')),
    })
    for (const name of ['x.bin', 'x.png', 'x.gif'])
      expectError(await h.call('read', { file_path: name }), `Error: cannot read "${h.abs(name)}": binary file`, 'FS_NOT_TEXT')
  })

  it('an image above readImageMaxBytes is FS_TOO_LARGE, under any name; a large non-image stays FS_NOT_TEXT', async () => {
    const files = { 'big.png': bigPng(200), 'big.dat': bigPng(200), 'ok.png': bigPng(100), 'blob.png': new Uint8Array(200) }
    const h = await setup(files, { config: { readImageMaxBytes: 100 } })
    for (const name of ['big.png', 'big.dat']) {
      const result = await h.call('read', { file_path: name })
      expectError(result, `Error: cannot read "${h.abs(name)}": the image (200 bytes) exceeds the 100-byte limit on images`, 'FS_TOO_LARGE')
    }
    expect((await h.call('read', { file_path: 'ok.png' })).image?.mimeType).toBe('image/png')
    expectError(await h.call('read', { file_path: 'blob.png' }), `Error: cannot read "${h.abs('blob.png')}": binary file`, 'FS_NOT_TEXT')
  })

  it('reading an image records the observation: a write after it replaces the file; without the read it is refused', async () => {
    const h = await setup({ 'p.png': PNG, 'q.png': PNG }, { policy: new ObservationPolicy() })
    expect((await h.call('write', { file_path: 'q.png', content: 'x' }, S)).code).toBe('FS_NOT_OBSERVED')
    expectOk(await h.call('read', { file_path: 'p.png' }, S))
    expectOk(await h.call('write', { file_path: 'p.png', content: 'now text\n' }, S))
    expect(h.peek('p.png')).toBe('now text\n')
  })

  const caps = makeHarness(kind)
  caps.dispose()
  it.runIf(caps.fs.capabilities.remove === true && caps.fs.capabilities.rename !== undefined)(
    'reading an image authorizes its delete and its move',
    async () => {
      const h = await setup({ 'p.png': PNG, 'q.png': PNG }, { policy: new ObservationPolicy() })
      expect((await h.call('delete', { path: 'p.png' }, S)).code).toBe('FS_NOT_OBSERVED')
      expectOk(await h.call('read', { file_path: 'p.png' }, S))
      expect(expectOk(await h.call('delete', { path: 'p.png' }, S))).toBe(`Deleted file "${h.abs('p.png')}".`)
      expectOk(await h.call('read', { file_path: 'q.png' }, S))
      expectOk(await h.call('move', { source_path: 'q.png', destination_path: 'img/q.png' }, S))
      expect((await h.call('read', { file_path: 'img/q.png' }, S)).image?.mimeType).toBe('image/png')
    },
  )
})

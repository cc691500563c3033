import { FsError, isFsError, type FileSystem, type FsTarget } from '@seamfs/core'
import { quotePath } from './quote.js'
import type { ToolImage } from './types.js'

/** The image types `read` returns as image content. */
export type ImageMimeType = ToolImage['mimeType']

/** An image as `read` found it: the type its bytes say, and the bytes. */
export interface ImageRead {
  readonly mimeType: ImageMimeType
  readonly bytes: Uint8Array
}

/** Names that suggest an image: such a file is read as bytes first, so an image is read once. The bytes decide. */
const IMAGE_NAME = /\.(?:png|jpe?g|gif|webp)$/i

/** Enough of a file's start to tell every type below. */
export const SNIFF_BYTES = 12

const PNG = [0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]
const JPEG = [0xff, 0xd8, 0xff]
const GIF87 = [0x47, 0x49, 0x46, 0x38, 0x37, 0x61]
const GIF89 = [0x47, 0x49, 0x46, 0x38, 0x39, 0x61]
const RIFF = [0x52, 0x49, 0x46, 0x46]
const WEBP = [0x57, 0x45, 0x42, 0x50]

/** The image type of `bytes` by their magic numbers (PNG, JPEG, GIF, WebP), or undefined. Never by name. */
export function sniffImage(bytes: Uint8Array): ImageMimeType | undefined {
  if (has(bytes, PNG)) return 'image/png'
  if (has(bytes, JPEG)) return 'image/jpeg'
  if (has(bytes, GIF87) || has(bytes, GIF89)) return 'image/gif'
  if (has(bytes, RIFF) && has(bytes, WEBP, 8)) return 'image/webp'
  return undefined
}

/** Whether `bytes` hold `signature` at `at` (a loop, no closure: every read of a text file asks). */
function has(bytes: Uint8Array, signature: readonly number[], at = 0): boolean {
  if (bytes.length < at + signature.length) return false
  for (let i = 0; i < signature.length; i++) if (bytes[at + i] !== signature[i]) return false
  return true
}

/**
 * The image side of `read`: a file whose bytes are a PNG, JPEG, GIF or WebP image, of at most
 * `maxBytes`, is returned whole; a larger image is `FS_TOO_LARGE` (told apart from other large
 * binary files by its first bytes alone); anything else is left to the text read.
 */
export class ImageReader {
  readonly #fs: FileSystem
  readonly #maxBytes: number

  constructor(fs: FileSystem, maxBytes: number) {
    this.#fs = fs
    this.#maxBytes = maxBytes
  }

  /** The largest image returned, in bytes. */
  get maxBytes(): number {
    return this.#maxBytes
  }

  /** Whether the name suggests an image (then `read` tries the image first). */
  named(target: FsTarget): boolean {
    return IMAGE_NAME.test(target.displayPath)
  }

  /** `FS_TOO_LARGE` for an image of `size` bytes (when known) above `limit`. */
  tooLarge(target: FsTarget, size: number | undefined, limit = this.#maxBytes): FsError {
    const what = size === undefined ? 'the image' : `the image (${size} bytes)`
    return FsError.at('FS_TOO_LARGE', 'read', target.displayPath, `${what} exceeds the ${limit}-byte limit on images`, {
      details: size === undefined ? { limit } : { size, limit },
    })
  }

  /** The image at `target` (of `size` bytes when known), or undefined when its bytes are not an image. */
  async read(target: FsTarget, size: number | undefined, signal: AbortSignal | undefined): Promise<ImageRead | undefined> {
    if (size !== undefined && size > this.#maxBytes) return this.#tooLarge(target, size, this.#maxBytes, signal)
    let bytes: Uint8Array
    try {
      bytes = await this.#fs.readBytes(target, { maxBytes: this.#maxBytes, signal })
    } catch (err) {
      if (!isFsError(err, 'FS_TOO_LARGE')) throw err
      return this.#tooLarge(target, err.details?.size, err.details?.limit ?? this.#maxBytes, signal)
    }
    const mimeType = sniffImage(bytes)
    return mimeType === undefined ? undefined : { mimeType, bytes }
  }

  /** A file too large to return: `FS_TOO_LARGE` when it is an image, else undefined (not ours to refuse). */
  async #tooLarge(target: FsTarget, size: number | undefined, limit: number, signal: AbortSignal | undefined): Promise<undefined> {
    if (sniffImage(await this.#head(target, signal)) === undefined) return undefined
    throw this.tooLarge(target, size, limit)
  }

  /** The first bytes of the file, without reading the rest. */
  async #head(target: FsTarget, signal: AbortSignal | undefined): Promise<Uint8Array> {
    const head = new Uint8Array(SNIFF_BYTES)
    let filled = 0
    for await (const chunk of await this.#fs.streamBytes(target, { signal })) {
      const n = Math.min(chunk.length, SNIFF_BYTES - filled)
      head.set(chunk.subarray(0, n), filled)
      filled += n
      if (filled === SNIFF_BYTES) break
    }
    return head.subarray(0, filled)
  }
}

/** The text a host without images shows for an image `read`: the envelope, with the type and size where lines would be. */
export function imageText(path: string, image: ImageRead): string {
  return `<path>${quotePath(path)}</path>\n<type>image</type>\n<content>\n(${image.mimeType}, ${image.bytes.length} bytes, returned as image content)\n</content>`
}

/** The image part of a tool result: base64 data and the detected type. */
export function toolImage(image: ImageRead): ToolImage {
  return { data: Buffer.from(image.bytes.buffer, image.bytes.byteOffset, image.bytes.byteLength).toString('base64'), mimeType: image.mimeType }
}

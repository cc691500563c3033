import { FsError, isFsError } from '@seamfs/core'
// readText's own rules; readText itself has no byte cap, so the bytes are read capped and decoded here.
import { decodeText } from '@seamfs/core/backend'
import type { FileDownloadResponse, FileUploadResponse, ReadRawResult } from 'deepagents'
import { isTextMime, mimeTypeOf } from './mime.js'
import { parseVirtual } from './paths.js'
import { transferError } from './results.js'
import type { Scope } from './scope.js'

/**
 * One host-side upload: `writeBytes`, unguarded (the host, not the model, writes; a session
 * that read the file before must read it again). Above `maxBytes` it is refused unwritten.
 */
export async function upload(scope: Scope, path: string, content: Uint8Array, maxBytes: number): Promise<FileUploadResponse> {
  const { signal } = scope.call()
  try {
    parseVirtual(path)
  } catch {
    return { path, error: 'invalid_path' }
  }
  try {
    const { target } = await scope.resolve(path, signal)
    if (!(content instanceof Uint8Array)) throw FsError.unsupported('write', target.displayPath, 'content must be a Uint8Array')
    if (content.length > maxBytes) throw FsError.tooLarge('write', target.displayPath, content.length, maxBytes)
    await scope.fs.writeBytes(target, content, { signal })
    return { path, error: null }
  } catch (err) {
    return { path, error: isDenied(err) ? 'permission_denied' : transferError(err) }
  }
}

/** One host-side download: the bytes as stored, at most `maxBytes` (a larger file is refused unread). */
export async function download(scope: Scope, path: string, maxBytes: number): Promise<FileDownloadResponse> {
  const { signal } = scope.call()
  try {
    parseVirtual(path)
  } catch {
    return { path, content: null, error: 'invalid_path' }
  }
  try {
    const { target } = await scope.resolve(path, signal)
    const content = plain(await scope.fs.readBytes(target, { maxBytes, signal }))
    return { path, content, error: null }
  } catch (err) {
    return { path, content: null, error: isDenied(err) ? 'permission_denied' : transferError(err) }
  }
}

/** The whole file as deepagents' `FileDataV2`: text for a text type (by extension), else bytes; times from the store's mtime. */
export async function readRaw(scope: Scope, path: string, maxBytes: number): Promise<ReadRawResult> {
  const { signal } = scope.call()
  const { target, virtual } = await scope.resolve(path, signal)
  const info = await scope.fs.stat(target, { signal })
  if (info === undefined) throw FsError.notFound('read', target.displayPath)
  if (info.type !== 'file') throw FsError.notRegularFile('read', target.displayPath)
  const mimeType = mimeTypeOf(virtual)
  if (info.size !== undefined && info.size > maxBytes) throw FsError.tooLarge('read', target.displayPath, info.size, maxBytes)
  const bytes = await scope.fs.readBytes(target, { maxBytes, signal })
  const content = isTextMime(mimeType) ? decodeText(bytes, target.displayPath) : plain(bytes)
  const at = info.mtime === undefined ? '' : new Date(info.mtime).toISOString()
  return { data: { content, mimeType, created_at: at, modified_at: at } }
}

function isDenied(err: unknown): boolean {
  return isFsError(err, 'FS_SANDBOX_DENIED')
}

/** A plain `Uint8Array` view of `bytes` (a backend may return a `Buffer`), as deepagents' own backends return. */
export function plain(bytes: Uint8Array): Uint8Array {
  return bytes.constructor === Uint8Array ? bytes : new Uint8Array(bytes.buffer, bytes.byteOffset, bytes.byteLength)
}

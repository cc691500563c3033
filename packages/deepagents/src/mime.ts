/**
 * deepagents decides by extension which files are binary (its `getMimeType`, not exported):
 * the same table, so `read_file` returns the content blocks deepagents expects and `write_file`
 * of such a path carries base64, as in deepagents' own backends.
 */
const MIME_TYPES: Readonly<Record<string, string>> = {
  '.png': 'image/png',
  '.jpg': 'image/jpeg',
  '.jpeg': 'image/jpeg',
  '.gif': 'image/gif',
  '.webp': 'image/webp',
  '.svg': 'image/svg+xml',
  '.heic': 'image/heic',
  '.heif': 'image/heif',
  '.mp3': 'audio/mpeg',
  '.wav': 'audio/wav',
  '.aiff': 'audio/aiff',
  '.aac': 'audio/aac',
  '.ogg': 'audio/ogg',
  '.flac': 'audio/flac',
  '.mp4': 'video/mp4',
  '.webm': 'video/webm',
  '.mpeg': 'video/mpeg',
  '.mov': 'video/quicktime',
}

/** The MIME type deepagents gives `path` (by extension; `text/plain` when unknown). */
export function mimeTypeOf(path: string): string {
  const name = path.slice(path.lastIndexOf('/') + 1)
  const dot = name.lastIndexOf('.')
  return dot <= 0 ? 'text/plain' : (MIME_TYPES[name.slice(dot).toLowerCase()] ?? 'text/plain')
}

/** deepagents' `isTextMimeType`. */
export function isTextMime(mimeType: string): boolean {
  return mimeType.startsWith('text/') || mimeType === 'application/json' || mimeType === 'application/javascript' || mimeType === 'image/svg+xml'
}

const BASE64 = /^[A-Za-z0-9+/]*={0,2}$/

/** Bytes of base64 text (a `data:` URL prefix and whitespace allowed), or `undefined` when it is not base64. */
export function decodeBase64(text: string): Uint8Array | undefined {
  const trimmed = text.trim()
  const payload = (trimmed.startsWith('data:') ? trimmed.slice(trimmed.indexOf(',') + 1) : trimmed).replace(/\s/g, '')
  if (payload.length % 4 === 1 || !BASE64.test(payload)) return undefined
  return new Uint8Array(Buffer.from(payload, 'base64'))
}

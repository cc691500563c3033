import { expect } from 'vitest'

const KIB = 1024
const MIB = 1024 * KIB

/**
 * Sizes around the thresholds a store may cut a write or a read at (64 KiB SFTP requests
 * and stream chunks, 256 KiB and 1 MiB read buffers, 5 MiB S3 parts): each side of the
 * first, then one byte past the others.
 */
export const THRESHOLD_SIZES: readonly number[] = [0, 1, 64 * KIB - 1, 64 * KIB + 1, 256 * KIB + 1, MIB + 1, 5 * MIB + 1]

/** `n` bytes as `KiB`/`MiB` plus a remainder, for test titles and messages. */
export function sizeLabel(n: number): string {
  if (n >= MIB) return `${Math.floor(n / MIB)} MiB${n % MIB === 0 ? '' : ` + ${n % MIB}`}`
  if (n >= KIB) return `${Math.floor(n / KIB)} KiB${n % KIB === 0 ? '' : ` + ${n % KIB}`}`
  return `${n} bytes`
}

/** {@link sizedText} puts a 3-byte character across every multiple of this many bytes. */
const STRADDLE_BYTES = 16 * KIB
const FILLER = '-'.repeat(40)

/**
 * Text of exactly `bytes` UTF-8 bytes: numbered ASCII lines (a dropped, repeated or
 * reordered chunk shows), a 3-byte character across every 16 KiB boundary (so across any
 * power-of-two chunk or part boundary from 16 KiB up) and 4- and 2-byte characters behind
 * it. Mostly ASCII, so megabytes of it are cheap to build, encode and decode. `tag` tells
 * two contents apart.
 */
export function sizedText(bytes: number, tag: string): string {
  const parts: string[] = []
  let size = 0
  let line = 0
  const push = (piece: string, length: number): void => {
    parts.push(piece)
    size += length
  }
  while (size < bytes) {
    // The 3-byte character starts one byte before the boundary, so the boundary splits it.
    const start = Math.min((Math.floor((size + 1) / STRADDLE_BYTES) + 1) * STRADDLE_BYTES - 1, bytes)
    for (let piece = `${tag}${line} ${FILLER}\n`; start - size >= piece.length; piece = `${tag}${++line} ${FILLER}\n`) {
      push(piece, piece.length)
    }
    push('x'.repeat(start - size), start - size)
    if (bytes - size >= 3) push('中', 3)
    if (bytes - size >= 6) push('🐂é', 6)
    if (bytes - size < 3) push('x'.repeat(bytes - size), bytes - size)
  }
  return parts.join('')
}

/** Where two strings first differ, or -1: a mismatch of megabytes is reported in a line, not as a diff. */
export function firstDifference(a: string, b: string): number {
  const n = Math.min(a.length, b.length)
  for (let i = 0; i < n; i++) if (a.charCodeAt(i) !== b.charCodeAt(i)) return i
  return a.length === b.length ? -1 : n
}

/** Fails with where `actual` departs from `expected` (lengths and a few characters around), never a huge diff. */
export function expectSameText(actual: string, expected: string, what: string): void {
  if (actual === expected) return
  const at = firstDifference(actual, expected)
  if (at === -1) return
  const around = (s: string): string => JSON.stringify(s.slice(Math.max(0, at - 8), at + 8))
  expect.fail(`${what}: differs at character ${at} (length ${actual.length}, expected ${expected.length}): got ${around(actual)}, expected ${around(expected)}`)
}

/** Same check on bytes. */
export function expectSameBytes(actual: Uint8Array, expected: Uint8Array, what: string): void {
  const n = Math.min(actual.length, expected.length)
  let at = -1
  for (let i = 0; i < n && at === -1; i++) if (actual[i] !== expected[i]) at = i
  if (at === -1 && actual.length !== expected.length) at = n
  if (at === -1) return
  const around = (b: Uint8Array): string => Array.from(b.subarray(Math.max(0, at - 4), at + 4), (x) => x.toString(16).padStart(2, '0')).join(' ')
  expect.fail(`${what}: differs at byte ${at} (length ${actual.length}, expected ${expected.length}): got [${around(actual)}], expected [${around(expected)}]`)
}

export const utf8 = (text: string): Uint8Array => new TextEncoder().encode(text)

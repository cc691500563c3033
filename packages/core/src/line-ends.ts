import { Buffer } from 'node:buffer'

/**
 * Counting line ends (`\n` bytes) at memory speed. The hunk headers of a diff need the line
 * number of a change, which is the count of the line ends before it: the one part of an edit's
 * diff whose cost follows the file rather than the change. A native `indexOf` per line runs at
 * about 1.3 GB/s on short lines; a 16-byte-at-a-time WebAssembly loop (SIMD compare, lanes summed
 * every 255 blocks) runs at about 5 GB/s, the copy into its memory included. Where WebAssembly
 * SIMD is not available (`--jitless`, an old engine), the `indexOf` loop counts.
 */

/**
 * The module, built from this text with wabt 1.0.39 (`parseWat(..., { simd: true }).toBinary()`):
 *
 * (module
 *   (memory (export "memory") 1)
 *   (func (export "count") (param $len i32) (result i32)
 *     (local $i i32) (local $k i32) (local $total i32) (local $end i32)
 *     (local $acc v128) (local $nl v128) (local $s v128)
 *     (local.set $nl (i8x16.splat (i32.const 10)))
 *     (local.set $end (i32.and (local.get $len) (i32.const -16)))
 *     (block $done
 *       (loop $outer
 *         (br_if $done (i32.ge_u (local.get $i) (local.get $end)))
 *         (local.set $acc (v128.const i32x4 0 0 0 0))
 *         (local.set $k (i32.const 0))
 *         (block $full
 *           (loop $inner
 *             (br_if $full (i32.ge_u (local.get $i) (local.get $end)))
 *             (br_if $full (i32.ge_u (local.get $k) (i32.const 255)))
 *             (local.set $acc (i8x16.sub (local.get $acc) (i8x16.eq (v128.load (local.get $i)) (local.get $nl))))
 *             (local.set $i (i32.add (local.get $i) (i32.const 16)))
 *             (local.set $k (i32.add (local.get $k) (i32.const 1)))
 *             (br $inner)))
 *         (local.set $s (i32x4.extadd_pairwise_i16x8_u (i16x8.extadd_pairwise_i8x16_u (local.get $acc))))
 *         (local.set $total (i32.add (local.get $total)
 *           (i32.add (i32.add (i32x4.extract_lane 0 (local.get $s)) (i32x4.extract_lane 1 (local.get $s)))
 *                    (i32.add (i32x4.extract_lane 2 (local.get $s)) (i32x4.extract_lane 3 (local.get $s))))))
 *         (br $outer)))
 *     (block $tail_done
 *       (loop $tail
 *         (br_if $tail_done (i32.ge_u (local.get $i) (local.get $len)))
 *         (local.set $total (i32.add (local.get $total) (i32.eq (i32.load8_u (local.get $i)) (i32.const 10))))
 *         (local.set $i (i32.add (local.get $i) (i32.const 1)))
 *         (br $tail)))
 *     (local.get $total)))
 */
const COUNT_WASM =
  'AGFzbQEAAAABBgFgAX8BfwMCAQAFAwEAAQcSAgZtZW1vcnkCAAVjb3VudAAACrsBAbgBAgR/A3tBCv0PIQYgAEFwcSEEAkADQCABIARPDQH9DAAAAAAAAAAAAAAAAAAAAAAhBUEAIQICQANAIAEgBE8NASACQf8BTw0BIAUgAf0ABAAgBv0j/XEhBSABQRBqIQEgAkEBaiECDAALCyAF/X39fyEHIAMgB/0bACAH/RsBaiAH/RsCIAf9GwNqamohAwwACwsCQANAIAEgAE8NASADIAEtAABBCkZqIQMgAUEBaiEBDAALCyADCw=='

/** What this file uses of the WebAssembly global, which the compiler's libraries here do not declare. */
declare const WebAssembly: {
  readonly Module: new (bytes: Uint8Array) => object
  readonly Instance: new (module: object) => { readonly exports: Record<string, unknown> }
}

/** Bytes copied into the module's memory and counted at a time: its one page. */
const CHUNK = 64 * 1024

interface Counter {
  readonly memory: Uint8Array
  readonly count: (length: number) => number
}

let counter: Counter | null | undefined

/** The WebAssembly counter, built on first use; `null` where it cannot be. */
function wasmCounter(): Counter | null {
  if (counter !== undefined) return counter
  try {
    const instance = new WebAssembly.Instance(new WebAssembly.Module(Buffer.from(COUNT_WASM, 'base64')))
    const { memory, count } = instance.exports as { memory: { buffer: ArrayBuffer }; count: (length: number) => number }
    counter = { memory: new Uint8Array(memory.buffer, 0, CHUNK), count }
  } catch {
    counter = null
  }
  return counter
}

/** How many `\n` bytes lie in `bytes[from, to)`. */
export function countLineEnds(bytes: Uint8Array, from = 0, to = bytes.length): number {
  const wasm = to - from >= 4096 ? wasmCounter() : null
  if (wasm === null) return countByIndexOf(bytes, from, to)
  let total = 0
  for (let at = from; at < to; at += CHUNK) {
    const end = Math.min(at + CHUNK, to)
    wasm.memory.set(bytes.subarray(at, end))
    total += wasm.count(end - at)
  }
  return total
}

/** {@link countLineEnds} one native search per line end. */
export function countByIndexOf(bytes: Uint8Array, from: number, to: number): number {
  const buf = Buffer.isBuffer(bytes) ? bytes : Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength)
  let count = 0
  for (let i = buf.indexOf(10, from); i !== -1 && i < to; i = buf.indexOf(10, i + 1)) count++
  return count
}

/** Below this many bytes ahead of a change, its line ends are counted when asked (a few microseconds): no background count. */
const TALLY_MIN_BYTES = 64 * 1024
/** Bytes a background count takes between turns of the event loop (about half a millisecond). */
const TALLY_SLICE_BYTES = 2 * 1024 * 1024

/**
 * The line ends in `bytes[0, end)` (the part of an edited file ahead of its change), counted in the
 * background: a slice of {@link TALLY_SLICE_BYTES} a turn of the event loop, started as soon as the
 * edit is computed, so that the count runs while the store writes the result (counting runs at
 * GB/s; a durable write of the same bytes, at most a few hundred MB/s). The diff's hunk headers need
 * that count (the change's line number): taken afterwards it would be the one part of the diff that
 * grows with the file. {@link upTo} answers at once from the count so far, finishing what is left
 * synchronously; a caller who never asks costs one count of the prefix, off the critical path.
 */
export class LineEndTally {
  readonly #bytes: Uint8Array
  readonly #end: number
  /** Counted so far: `#count` line ends in `bytes[0, #at)`. */
  #at = 0
  #count = 0

  /** A tally of `bytes[0, end)`; counted in the background only when `end` is large enough to matter. */
  constructor(bytes: Uint8Array, end: number) {
    this.#bytes = bytes
    this.#end = Math.min(end, bytes.length)
    if (this.#end >= TALLY_MIN_BYTES) this.#schedule()
  }

  /** How far the count has come: the line ends of `bytes[0, counted)` are known. */
  get counted(): number {
    return this.#at
  }

  /** How many line ends lie in `bytes[0, at)`. */
  upTo(at: number): number {
    const to = Math.max(0, Math.min(at, this.#bytes.length))
    if (to >= this.#at) {
      // On from the count so far; within the tally's range the background need not count it again.
      const count = this.#count + countLineEnds(this.#bytes, this.#at, to)
      if (to <= this.#end) {
        this.#at = to
        this.#count = count
      }
      return count
    }
    // Behind the count: back from it, or from the start, whichever is shorter.
    return this.#at - to <= to ? this.#count - countLineEnds(this.#bytes, to, this.#at) : countLineEnds(this.#bytes, 0, to)
  }

  #schedule(): void {
    setImmediate(() => {
      if (this.#at >= this.#end) return
      const to = Math.min(this.#end, this.#at + TALLY_SLICE_BYTES)
      this.#count += countLineEnds(this.#bytes, this.#at, to)
      this.#at = to
      if (to < this.#end) this.#schedule()
    }).unref()
  }
}

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

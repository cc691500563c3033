import type { FsLimits } from '@seamfs/core'
import { FsVersion } from '@seamfs/core/backend'
import type { ConformanceOptions, ConformanceTuning } from '@seamfs/conformance'
import mapConformance from '../../examples/map-conformance.js'
import { normalize, type MapFileSystem } from '../../examples/map-file-system.js'

/**
 * Tuning of every broken run: small enough that ~70 CLI runs stay practical, large enough that
 * each clause still runs its real shape (streams of several chunks, a writer racing a reader, a
 * model run long enough to reach a same-size overwrite of a file with a BOM).
 */
export const TUNING: ConformanceTuning = { modelRuns: 40, largeFileBytes: 512 * 1024, atomicityBytes: 256 * 1024, atomicityWrites: 40, timeoutMs: 30_000 }

/** Conformance options for a deliberately broken variant of the Map example backend. */
export function brokenConformance(name: string, create: (limits?: FsLimits) => MapFileSystem): ConformanceOptions<MapFileSystem> {
  return {
    ...mapConformance,
    name,
    create: ({ limits }) => ({ fs: create(limits) }),
    options: TUNING,
  }
}

/** The version the Map example gives a file of this generation. */
export const mapVersion = (generation: number): FsVersion => FsVersion(`g${generation}`)

/** One event-loop turn: where a real store would wait for I/O, letting other calls interleave. */
export const tick = (): Promise<void> => new Promise((resolve) => setImmediate(resolve))

/** The Map example's key of a path: POSIX-normalized against `cwd` (`.`/`..` folded). */
export const mapKey = (path: string, cwd = '/'): string => normalize(path, cwd)

/** The directory part of a Map key (`/` for a top-level name). */
export const parentKey = (key: string): string => key.slice(0, key.lastIndexOf('/')) || '/'

/** A staging key next to `key`, as a write-then-rename backend would use. */
export const stagingKey = (key: string, n: number): string => `${key.slice(0, key.lastIndexOf('/'))}/.${key.slice(key.lastIndexOf('/') + 1)}.tmp-${n}`

/** True when `bytes` starts with the UTF-8 BOM. */
export const hasBom = (bytes: Uint8Array): boolean => bytes[0] === 0xef && bytes[1] === 0xbb && bytes[2] === 0xbf

/** CRLF → LF on bytes, as a text-mode read would do. */
export function crlfToLf(bytes: Uint8Array): Uint8Array {
  const text = Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength).toString('latin1')
  return Buffer.from(text.replaceAll('\r\n', '\n'), 'latin1')
}

import { expect } from 'vitest'
import { FsError, isFsError, type FsErrorCode } from '@seamfs/core/backend'

/** Runs `fn`, expects it to throw an {@link FsError} with `code`, and returns the error. */
export function expectFsError(fn: () => unknown, code: FsErrorCode): FsError {
  let caught: unknown
  try {
    fn()
  } catch (err) {
    caught = err
  }
  expect(caught, `expected ${code} to be thrown`).toBeInstanceOf(FsError)
  expect((caught as FsError).code).toBe(code)
  expect(isFsError(caught, code)).toBe(true)
  return caught as FsError
}

/** Awaits `promise`, expects it to reject with an {@link FsError} with `code`, and returns the error. */
export async function expectFsErrorAsync(promise: Promise<unknown>, code: FsErrorCode): Promise<FsError> {
  let caught: unknown
  try {
    await promise
  } catch (err) {
    caught = err
  }
  expect(caught, `expected ${code} to be rejected`).toBeInstanceOf(FsError)
  expect((caught as FsError).code).toBe(code)
  return caught as FsError
}

/** The UTF-8 bytes of `text` (Node's encoder, independent of the package under test). */
export function utf8(text: string): Uint8Array {
  return new Uint8Array(Buffer.from(text, 'utf8'))
}

/** Concatenates byte arrays. */
export function concatBytes(...parts: readonly (ArrayLike<number> | Uint8Array)[]): Uint8Array {
  const total = parts.reduce((n, p) => n + p.length, 0)
  const out = new Uint8Array(total)
  let at = 0
  for (const p of parts) {
    out.set(p, at)
    at += p.length
  }
  return out
}

/** `n` bytes of ASCII 'a'. */
export function asciiBytes(n: number): Uint8Array {
  return new Uint8Array(n).fill(0x61)
}

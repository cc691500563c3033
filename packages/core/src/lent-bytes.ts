/**
 * Bytes a backend lends to an edit's `transform` (see `FileSystem.updateBytes`): a read buffer it
 * uses again for the next edit, so that an edit costs no fresh buffer of the file's size. Core keeps
 * none of the lent bytes once `transform` has returned or thrown: what the outcome needs later (the
 * text before, the changed region) is kept from the edit's output and a copy of the changed bytes.
 */
const lent = new WeakSet<Uint8Array>()

/**
 * Marks `bytes` (the very array given to `transform`) as lent: the backend may overwrite them as
 * soon as `transform` returns or throws. Without it, `transform`'s input must never change
 * afterwards (the outcome decodes its `before` from it when first read).
 */
export function lendBytes<T extends Uint8Array>(bytes: T): T {
  lent.add(bytes)
  return bytes
}

/** Whether `bytes` were lent ({@link lendBytes}). */
export function isLent(bytes: Uint8Array): boolean {
  return lent.has(bytes)
}

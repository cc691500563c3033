/**
 * The result cap applied to `structuredContent`. The SDK's `Client` rejects a
 * success without `structuredContent` from a tool with an `outputSchema`, so an
 * oversized one is shrunk (arrays keep their first items, long strings their
 * start) rather than dropped.
 */

type Json = null | boolean | number | string | Json[] | { [key: string]: Json }

/** One shrinking step and the bytes it saves (about). */
interface Cut {
  readonly saving: number
  apply(): void
}

/** Strings this short are never cut: an enum value or a name must stay whole. */
const MIN_CUT_CHARS = 64
/** Enough halvings for any size a string or array can have. */
const MAX_CUTS = 128

const bytesOf = (value: unknown): number => Buffer.byteLength(JSON.stringify(value) ?? '')

/** `text` cut to about half its UTF-8 bytes, on a character boundary. */
function halfOf(text: string): string {
  const budget = Math.floor(Buffer.byteLength(text) / 2)
  const { read } = new TextEncoder().encodeInto(text, new Uint8Array(budget))
  return text.slice(0, read)
}

function better(a: Cut | undefined, b: Cut | undefined): Cut | undefined {
  if (a === undefined) return b
  if (b === undefined) return a
  return b.saving > a.saving ? b : a
}

/**
 * The cut that saves most anywhere in `node`: halve an array (drop its tail) or a long string.
 * An array of one item is emptied only when `empty` allows it: one line cut short says more than none.
 */
function bestCut(node: Json, replace: (value: Json) => void, empty: boolean): Cut | undefined {
  if (typeof node === 'string') {
    return node.length > MIN_CUT_CHARS ? { saving: Buffer.byteLength(node) / 2, apply: () => replace(halfOf(node)) } : undefined
  }
  if (node === null || typeof node !== 'object') return undefined
  let best: Cut | undefined
  if (Array.isArray(node)) {
    node.forEach(
      (item, i) =>
        (best = better(
          best,
          bestCut(item, (v) => (node[i] = v), empty),
        )),
    )
    if (node.length > (empty ? 0 : 1)) {
      const keep = Math.floor(node.length / 2)
      best = better(best, { saving: bytesOf(node.slice(keep)), apply: () => (node.length = keep) })
    }
    return best
  }
  for (const key of Object.keys(node))
    best = better(
      best,
      bestCut(node[key] as Json, (v) => (node[key] = v), empty),
    )
  return best
}

/** What {@link capStructuredContent} made of a tool's structured content. */
export interface CappedContent {
  /** The content to send; `undefined` when nothing could make it fit. */
  readonly content: Record<string, unknown> | undefined
  /** The JSON size in UTF-8 bytes before capping, when it was over the cap. */
  readonly overBytes?: number | undefined
}

/**
 * `content` as is when its JSON fits in `maxBytes` UTF-8 bytes; else a copy
 * shrunk until it fits, each step taking the largest saving: an array keeps
 * its first half (one item is dropped only when nothing else is left to cut),
 * a string over 64 characters its first half (on a character boundary). Keys, numbers, booleans and short strings are kept, so a schema
 * that only types its members (as the seamfs tools' do) still validates. When
 * no step is left and it still does not fit, `content` is `undefined`.
 */
export function capStructuredContent(content: Record<string, unknown>, maxBytes: number): CappedContent {
  const total = bytesOf(content)
  if (total <= maxBytes) return { content }
  const copy = JSON.parse(JSON.stringify(content)) as { [key: string]: Json }
  for (let i = 0; i < MAX_CUTS && bytesOf(copy) > maxBytes; i++) {
    const cut = bestCut(copy, () => undefined, false) ?? bestCut(copy, () => undefined, true)
    if (cut === undefined) break
    cut.apply()
  }
  return { content: bytesOf(copy) <= maxBytes ? copy : undefined, overBytes: total }
}

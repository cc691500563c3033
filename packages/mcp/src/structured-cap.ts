/**
 * The result cap applied to `structuredContent`. The SDK's `Client` rejects a
 * success without `structuredContent` from a tool with an `outputSchema`, so an
 * oversized one is shrunk (arrays keep their first items, long strings their
 * start) rather than dropped.
 */

type Json = null | boolean | number | string | Json[] | { [key: string]: Json }

/** Strings this short are never cut, and a longer one keeps at least this many characters: an enum value or a name must stay whole. */
const MIN_CUT_CHARS = 64
/** Values nested deeper than this are kept as they are: the walk stays shallow, whatever the input. */
const MAX_DEPTH = 256
/** Bisection steps for the keep ratio: it ends within 2^-24 of the largest that fits. */
const SEARCH_STEPS = 24

/** The start of `text`: `ratio` of its length, at least {@link MIN_CUT_CHARS}, never ending between the halves of a surrogate pair. */
function prefixOf(text: string, ratio: number): string {
  let end = Math.max(MIN_CUT_CHARS, Math.ceil(text.length * ratio))
  if (end >= text.length) return text
  const last = text.charCodeAt(end - 1)
  if (last >= 0xd800 && last <= 0xdbff) end--
  return text.slice(0, end)
}

/**
 * `node` with every array cut to its first `ceil(length · ratio)` items and every
 * string over {@link MIN_CUT_CHARS} to its first `ceil(length · ratio)` characters
 * (at least that many), below {@link MAX_DEPTH}. Only what is kept is visited, and
 * the result grows with `ratio`, so the largest ratio that fits can be bisected.
 */
function shrink(node: Json, ratio: number, depth: number): Json {
  if (depth > MAX_DEPTH) return node
  if (typeof node === 'string') return prefixOf(node, ratio)
  if (node === null || typeof node !== 'object') return node
  if (Array.isArray(node)) {
    const kept = Math.min(node.length, Math.ceil(node.length * ratio))
    const out = new Array<Json>(kept)
    for (let i = 0; i < kept; i++) out[i] = shrink(node[i] as Json, ratio, depth + 1)
    return out
  }
  // fromEntries defines own properties, so a `__proto__` key stays a key.
  return Object.fromEntries(Object.keys(node).map((key) => [key, shrink(node[key] as Json, ratio, depth + 1)]))
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
 * shrunk by one keep ratio `r` for the whole value, the largest that fits
 * (bisected: about 25 passes, each building and measuring one candidate): every
 * array keeps its first `ceil(length · r)` items (so at least one while `r > 0`;
 * all are emptied only when nothing else fits), every string over 64 characters
 * its first `ceil(length · r)` characters but at least 64, never half a
 * surrogate pair. Keys, numbers, booleans and short strings are kept, so a
 * schema that only types its members (as the seamfs tools' do) still validates.
 * Values nested over 256 deep are kept whole. When even `r = 0` does not fit,
 * `content` is `undefined`. A value that is not JSON (a cycle, a BigInt) throws
 * as `JSON.stringify` does.
 */
export function capStructuredContent(content: Record<string, unknown>, maxBytes: number): CappedContent {
  const json = JSON.stringify(content) as string | undefined
  const total = Buffer.byteLength(json ?? '')
  if (total <= maxBytes || json === undefined) return { content }
  const value = JSON.parse(json) as Json
  const fitting = (ratio: number): Json | undefined => {
    const candidate = shrink(value, ratio, 0)
    return Buffer.byteLength(JSON.stringify(candidate)) <= maxBytes ? candidate : undefined
  }
  let best = fitting(0)
  if (best === undefined) return { content: undefined, overBytes: total }
  let [low, high] = [0, 1]
  for (let step = 0; step < SEARCH_STEPS; step++) {
    const middle = (low + high) / 2
    const candidate = fitting(middle)
    if (candidate === undefined) high = middle
    else [low, best] = [middle, candidate]
  }
  return { content: best as Record<string, unknown>, overBytes: total }
}

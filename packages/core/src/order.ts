/**
 * Orders names by Unicode code point, which equals UTF-8 byte order (how S3
 * lists) and, unlike `localeCompare`, does not depend on the host's locale.
 * JavaScript's `<` compares UTF-16 units, which puts U+E000–U+FFFF after
 * astral characters; this fixes that.
 */
export function compareNames(a: string, b: string): number {
  const n = Math.min(a.length, b.length)
  for (let i = 0; i < n; i++) {
    const x = a.charCodeAt(i)
    const y = b.charCodeAt(i)
    if (x !== y) return codePointRank(x) - codePointRank(y)
  }
  return a.length - b.length
}

function codePointRank(unit: number): number {
  if (unit < 0xd800) return unit
  // Surrogates (astral characters) rank above every BMP unit from U+E000 on.
  return unit >= 0xe000 ? unit - 0x800 : unit + 0x2000
}

/** A UTF-16 surrogate unit: the only units whose order differs from their code point's. */
const SURROGATE = /[\ud800-\udfff]/

/**
 * Sorts `items` in place by name in code-point order ({@link compareNames}) and returns them.
 * Without surrogates (no astral character: nearly every name) code-unit order is code-point
 * order, and the engine's own string comparison does it faster than a loop over the units.
 */
export function sortByName<T extends { readonly name: string }>(items: T[]): T[] {
  for (const item of items) {
    if (SURROGATE.test(item.name)) return items.sort(byCodePoint)
  }
  return items.sort(byCodeUnit)
}

function byCodePoint(a: { readonly name: string }, b: { readonly name: string }): number {
  return compareNames(a.name, b.name)
}

function byCodeUnit(a: { readonly name: string }, b: { readonly name: string }): number {
  return a.name < b.name ? -1 : a.name === b.name ? 0 : 1
}

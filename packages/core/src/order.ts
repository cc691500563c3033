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

/**
 * Characters that could make an envelope say something untrue: C0/C1 controls
 * (newlines among them), line and paragraph separators, bidirectional overrides.
 */
// eslint-disable-next-line no-control-regex -- matching control characters is the point
const UNSAFE_CHARS = /[\u0000-\u001f\u007f-\u009f\u2028\u2029\u202a-\u202e\u2066-\u2069]/

/** Escapes for what JSON.stringify leaves raw but a reader could be fooled by. */
const ESCAPE_EXTRA = /[\u007f-\u009f\u2028\u2029\u202a-\u202e\u2066-\u2069]/g

function quoted(text: string): string {
  return JSON.stringify(text)
    .replace(ESCAPE_EXTRA, (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`)
    .replaceAll('</', '<\\/')
}

/**
 * A path as shown inside `<path>…</path>` or a message: verbatim, unless it
 * could forge the envelope (a control character, a leading `"`, a backslash,
 * `</`), in which case it becomes a JSON string with `</` neutralized.
 */
export function quotePath(path: string): string {
  const unsafe = UNSAFE_CHARS.test(path) || path.startsWith('"') || path.includes('\\') || path.includes('</')
  return unsafe ? quoted(path) : path
}

/** A path inside a message, in double quotes: `"src/a.ts"`, or the JSON string when it must be quoted anyway. */
export function messagePath(path: string): string {
  const shown = quotePath(path)
  return shown === path ? `"${path}"` : shown
}

/** A listing entry name: as {@link quotePath}, and also quoted when a trailing `@` would read as the non-regular marker. */
export function quoteName(name: string): string {
  return name.endsWith('@') ? quoted(name) : quotePath(name)
}

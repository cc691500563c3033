/**
 * Characters that could make an envelope say something untrue: C0/C1 controls
 * (newlines among them), line and paragraph separators, bidirectional overrides.
 */
// eslint-disable-next-line no-control-regex -- matching control characters is the point
const UNSAFE_CHARS = /[\u0000-\u001f\u007f-\u009f\u2028\u2029\u202a-\u202e\u2066-\u2069]/

/** Every unsafe character, for escaping them in place. */
const UNSAFE_ALL = new RegExp(UNSAFE_CHARS.source, 'g')

/** The short JSON escapes; every other unsafe character becomes `\uXXXX`. */
const SHORT_ESCAPES: Readonly<Record<string, string>> = { '\b': '\\b', '\t': '\\t', '\n': '\\n', '\f': '\\f', '\r': '\\r' }

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

/**
 * `text` with every character that could forge what the model reads (a control character, a
 * newline, a bidirectional override) written as its JSON escape (`\n`, `\u202e`) where it stands.
 * For text that may hold a name from the store in a place {@link quotePath} cannot delimit.
 */
export function escapeUnsafe(text: string): string {
  return text.replace(UNSAFE_ALL, (c) => SHORT_ESCAPES[c] ?? `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`)
}

/**
 * The messages core, the policy and the backends build around a path, as `head` + `"<path>"`
 * + the text that closes the path: `cannot <verb> "<path>": …`, `cannot overwrite existing
 * "<path>" without reading it first`, `edit requires reading "<path>" first` (and `remove`, `move`). The path is put
 * in raw; the first closing text after the head ends it.
 */
const PATH_MESSAGES: readonly (readonly [head: RegExp, end: RegExp])[] = [
  [/^cannot (?:resolve|stat|lstat|read|list|write|edit|remove|rename|create directory|move) "/, /": /],
  [/^cannot overwrite existing "/, /" without reading it first/],
  [/^cannot (?:rename|move) onto existing "/, /" without overwrite/],
  [/^(?:edit|remove|move) requires reading "/, /" first/],
]

/**
 * An error message as the model may read it: the path of a core-shaped message (see
 * `PATH_MESSAGES`) quoted as a listing quotes it ({@link messagePath}), and every unsafe
 * character elsewhere (a name inside a store's own message) escaped in place.
 */
export function messageText(message: string): string {
  for (const [head, end] of PATH_MESSAGES) {
    const opened = head.exec(message)
    if (opened === null) continue
    const start = opened[0].length
    const close = message.slice(start).search(end)
    if (close < 0) break
    const path = message.slice(start, start + close)
    return `${opened[0].slice(0, -1)}${messagePath(path)}${escapeUnsafe(message.slice(start + close + 1))}`
  }
  return escapeUnsafe(message)
}

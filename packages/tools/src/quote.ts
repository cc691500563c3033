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

/** The facts of an error that {@link errorText} shows: its message and the path it is about. */
export interface PathMessage {
  readonly message: string
  /** The raw display path the failure is about (an `FsError`'s `path`), if any. */
  readonly path?: string | undefined
}

/**
 * An error's message as the model may read it. Core, the policy, the backends and the tools put
 * the raw path an error is about (its `path` field) in double quotes in its message
 * (`cannot <verb> "<path>": …`): the first `"<path>"` is shown as a listing shows names
 * ({@link messagePath}), and every unsafe character elsewhere (a name inside a store's own
 * message) is escaped in place ({@link escapeUnsafe}). An error without a `path`, or whose message
 * does not quote it, is escaped whole.
 */
export function errorText(err: PathMessage): string {
  const { message, path } = err
  const at = path === undefined ? -1 : message.indexOf(`"${path}"`)
  if (path === undefined || at < 0) return escapeUnsafe(message)
  const end = at + path.length + 2
  return `${escapeUnsafe(message.slice(0, at))}${messagePath(path)}${escapeUnsafe(message.slice(end))}`
}

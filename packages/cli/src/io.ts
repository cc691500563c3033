/** Where a command writes; tests pass their own. */
export interface Io {
  readonly stdout: (text: string) => void
  readonly stderr: (text: string) => void
  readonly stdin: () => Promise<string>
  readonly cwd: string
  readonly env: Readonly<Record<string, string | undefined>>
  /** Whether stderr is a terminal: colour and a live progress line go there only then. Absent: not one. */
  readonly stderrIsTTY?: boolean | undefined
}

/** The ANSI styles of the CLI's own lines on stderr; each is the identity when colour is off. */
export interface Paint {
  readonly error: (text: string) => string
  readonly warning: (text: string) => string
  readonly quiet: (text: string) => string
}

const PLAIN: Paint = { error: (t) => t, warning: (t) => t, quiet: (t) => t }
const sgr =
  (open: number, close: number) =>
  (text: string): string =>
    `\u001b[${open}m${text}\u001b[${close}m`

/**
 * Colour on stderr only when it is a terminal, `NO_COLOR` is unset or empty (no-color.org) and
 * `--no-color` was not given; `FORCE_COLOR` (set, not `0`) turns it on where stderr is not a terminal.
 */
export function paintFor(io: Io, colorOption: boolean): Paint {
  if (!colorOption || (io.env['NO_COLOR'] ?? '') !== '') return PLAIN
  const forced = io.env['FORCE_COLOR']
  const on = forced === undefined || forced === '' ? io.stderrIsTTY === true : forced !== '0'
  return on ? { error: sgr(31, 39), warning: sgr(33, 39), quiet: sgr(2, 22) } : PLAIN
}

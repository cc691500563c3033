/** Where a command writes; tests pass their own. */
export interface Io {
  readonly stdout: (text: string) => void
  readonly stderr: (text: string) => void
  readonly stdin: () => Promise<string>
  readonly cwd: string
  readonly env: Readonly<Record<string, string | undefined>>
}

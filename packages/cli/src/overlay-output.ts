/**
 * What `seamfs changes` and `seamfs commit` print: for people (a line per change, its diff under
 * it) and as JSON (the same facts; a binary file's new bytes in base64).
 */
import type { OverlayChange, OverlayCommitReport, OverlayStep } from '@seamfs/tools'
import type { Paint } from './io.js'

const KIND_WIDTH = 'create directory'.length

/** One change: its kind and path, what it was based on, and its diff (or its size). */
export function changeText(change: OverlayChange, paint: Paint): string {
  const counts = change.added === undefined ? '' : ` (+${change.added} -${change.removed ?? 0})`
  const size = change.type === 'file' && change.diff === undefined ? ` (${change.size ?? 0} bytes${change.bytes === undefined ? '' : ', binary'})` : ''
  const head = `${change.kind.padEnd(KIND_WIDTH)}  ${change.path}${counts}${size}`
  return change.diff === undefined || change.diff === '' ? head : `${head}\n${paint.quiet(change.diff)}`
}

export function changeJson(change: OverlayChange): Record<string, unknown> {
  const { bytes, ...rest } = change
  return bytes === undefined ? rest : { ...rest, bytes: Buffer.from(bytes).toString('base64') }
}

const stepText = (step: OverlayStep): string => `  ${step.kind.padEnd(KIND_WIDTH)}  ${step.path}`

/** A commit's outcome, and exactly what stands in the store after it. */
export function reportText(report: OverlayCommitReport): string {
  const lines: string[] = []
  const count = (n: number): string => `${n} change${n === 1 ? '' : 's'}`
  if (report.outcome === 'committed') {
    lines.push(`Committed ${count(report.standing.length)}.`)
    if (report.already.length > 0) lines.push(`Already in the store (left as they are): ${count(report.already.length)}`, ...report.already.map(stepText))
  } else if (report.outcome === 'conflict') {
    lines.push('Nothing was committed: the store changed under these paths since the overlay was based on them.')
    for (const c of report.conflicts)
      lines.push(
        `  ${c.path}: was ${c.base.type}${c.base.version === undefined ? '' : ` ${c.base.version}`}, now ${c.now.type}${c.now.version === undefined ? '' : ` ${c.now.version}`}`,
      )
    lines.push('Discard those changes (seamfs discard <path>), or commit the others by path.')
  } else {
    lines.push(`The commit failed at ${report.failure?.step.kind} ${report.failure?.step.path}: ${report.failure?.error.message}`)
    if (report.undone.length > 0) lines.push(`Undone: ${count(report.undone.length)}`, ...report.undone.map(stepText))
    lines.push(
      report.standing.length === 0 ? 'Nothing of this commit is in the store.' : `Still in the store (could not be undone): ${count(report.standing.length)}`,
    )
    lines.push(...report.standing.map(stepText))
    if (report.already.length > 0) lines.push(`Already in the store before the commit: ${count(report.already.length)}`, ...report.already.map(stepText))
    lines.push('The overlay keeps every change: run seamfs commit again once the store works.')
  }
  return lines.join('\n')
}

export function reportJson(report: OverlayCommitReport): Record<string, unknown> {
  const { failure, ...rest } = report
  return failure === undefined ? rest : { ...rest, failure: { step: failure.step, code: failure.error.code, message: failure.error.message } }
}

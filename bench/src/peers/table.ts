/** The markdown table of the peer bench, one row per job. */
import { median, type ColumnResult, type JobResult, type Slot } from './harness.js'

const HEADERS: ReadonlyArray<[Slot | 'job' | 'paired', string]> = [
  ['job', 'job'],
  ['limit', 'limit'],
  ['seamfs', 'seamfs contract'],
  ['tools', 'seamfs tools'],
  ['paired', 'tools / contract'],
  ['deepagents', 'deepagents'],
  ['mcp', 'MCP fs server (lib)'],
  ['flystorage', 'flystorage'],
  ['other', 'other'],
]

const cellText = (text: string): string => text.replaceAll('|', '\\|')

function ms(value: number): string {
  return value >= 100 ? Math.round(value).toLocaleString('en') : value.toFixed(value >= 10 ? 1 : 2)
}

function limitCell(limit: ColumnResult | undefined, job: string): string {
  if (limit === undefined || limit.error !== undefined || limit.ms.length === 0) return `n/a (${cellText(limit?.error ?? 'no limit')})`
  const where = job === 'memory' ? ' (raw memfs `Volume`)' : ''
  return `${ms(median(limit.ms))} ms${where} (${ms(Math.min(...limit.ms))}–${ms(Math.max(...limit.ms))})`
}

function ratioCell(column: ColumnResult, limitMedian: number, prefixLabel: boolean): string {
  const label = column.label === undefined ? '' : column.label
  if (column.error !== undefined || column.ms.length === 0) return `${prefixLabel && label ? `${label} ` : ''}n/a (${cellText(column.error ?? 'no rounds')})`
  const ratio = (value: number): string => (value / limitMedian).toFixed(2)
  const text = `×${ratio(median(column.ms))} (${ratio(Math.min(...column.ms))}–${ratio(Math.max(...column.ms))})`
  const durable = column.notDurable ? ' (not durable)' : ''
  if (label === '') return `${text}${durable}`
  return prefixLabel ? `${label} ${text}${durable}` : `${text} ${label}${durable}`
}

/**
 * Tools over contract, round by round: the two ran in the same round, one after the other, so what
 * slows the machine for a while (another tenant, a collection the peers' garbage set off) slows both
 * and cancels out, where a ratio of the two columns' medians takes it in whole. Median (range).
 */
function pairedCell(result: JobResult): string {
  const contract = result.columns.find((c) => c.slot === 'seamfs')
  const tools = result.columns.find((c) => c.slot === 'tools')
  if (contract === undefined || tools === undefined || contract.ms.length === 0 || contract.ms.length !== tools.ms.length) return 'n/a'
  const ratios = tools.ms.map((t, i) => t / (contract.ms[i] as number))
  return `×${median(ratios).toFixed(2)} (${Math.min(...ratios).toFixed(2)}–${Math.max(...ratios).toFixed(2)})`
}

/** One row per job; a slot holding several columns (deepagents' two memory backends) lists them joined by " · ". */
export function table(results: ReadonlyArray<JobResult | { job: string; error: string }>): string {
  const lines = [`| ${HEADERS.map(([, h]) => h).join(' | ')} |`, `|${HEADERS.map(() => '---').join('|')}|`]
  for (const result of results) {
    if ('error' in result) {
      lines.push(`| ${result.job} | n/a (${cellText(result.error)}) |${' |'.repeat(HEADERS.length - 2)}`)
      continue
    }
    const limit = result.columns.find((c) => c.slot === 'limit')
    const limitMedian = limit !== undefined && limit.ms.length > 0 ? median(limit.ms) : Number.NaN
    const cells = HEADERS.map(([slot]) => {
      if (slot === 'job') return cellText(result.title)
      if (slot === 'limit') return limitCell(limit, result.job)
      if (slot === 'paired') return pairedCell(result)
      const columns = result.columns.filter((c) => c.slot === slot)
      return columns.map((c) => ratioCell(c, limitMedian, slot === 'other')).join(' · ')
    })
    lines.push(`| ${cells.join(' | ')} |`)
  }
  return lines.join('\n')
}

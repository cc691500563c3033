/** The conformance run's progress: a line per test on a log or pipe, one status line rewritten in place on a terminal. */
import { describe, expect, it } from 'vitest'
import type { TestReport } from '@seamfs/conformance/runner'
import { progressPrinter } from '../src/conformance.js'

const test = (state: TestReport['state'], name: string): TestReport => ({ clause: 'read', name, state, durationMs: 1 })

function printed(live: boolean): string {
  let out = ''
  const printer = progressPrinter('memory', { progress: (text) => (out += text), live })
  printer.onTest(test('passed', 'first'))
  printer.onTest(test('failed', 'second'))
  printer.onTest(test('skipped', 'x'.repeat(300)))
  printer.end()
  return out
}

describe('seamfs conformance progress', () => {
  it('on a log or a pipe: a line per test, nothing rewritten', () => {
    expect(printed(false)).toBe('[memory   1] ✓ read › first\n[memory   2] ✗ read › second\n[memory   3] - read › ' + 'x'.repeat(300) + '\n')
  })

  it('on a terminal: one status line rewritten in place, cut to the width; a failure stays on its own line; cleared at the end', () => {
    const out = printed(true)
    const clear = '\r\u001b[K'
    expect(out.startsWith(`${clear}[memory   1] read › first${clear}[memory   2] ✗ read › second\n${clear}[memory   3, 1 failed] read › x`)).toBe(true)
    const last = out
      .slice(out.lastIndexOf('\n') + 1)
      .split(clear)
      .filter((s) => s !== '')
    expect(last).toHaveLength(1)
    expect([...(last[0] ?? '')].length).toBe(100)
    expect(out.endsWith(clear)).toBe(true)
  })
})

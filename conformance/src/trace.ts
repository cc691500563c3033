/**
 * The trace from each rule line of the contract to the kit tests that check it.
 *
 * A rule line is a `- ` bullet in the TSDoc of a declaration in `packages/core/src/file-system.ts`
 * or `types.ts` (the class's own bullets are the rules common to every method). Entries are keyed
 * by owner (`FileSystem`, `FileSystem.readText`, `FsWriteOutcome.before`…) and by the rule's text
 * exactly as written (continuation lines joined, the final `;` or `.` dropped), so editing a rule
 * forces its trace to be reviewed. A test is named by its title, or `clause › title`; `*` stands
 * for any text (for titles that carry a seed or a size, or for every row of a table-driven clause).
 * A `note` says which part of the rule no test checks yet; it is shown in the table. The entries
 * are kept by family of method in `trace/` and joined here.
 *
 * `conformance/test/trace.test.ts` fails on a rule line without an entry, an entry whose rule line
 * is gone, or a test the kit does not register, and keeps the table in conformance/README.md in
 * sync (regenerate: `UPDATE_TRACE=1 npx vitest run conformance/test/trace.test.ts`). Name a test
 * here only if it can fail when the rule is broken.
 */

import type { OwnerTraces, RuleTrace } from './trace/rule-trace.js'
import { READ_TRACE } from './trace/reads.js'
import { TREE_TRACE } from './trace/tree.js'
import { WRITE_TRACE } from './trace/writes.js'
import { GENERATIVE_TRACE } from './trace/generative.js'

export type { RuleTrace } from './trace/rule-trace.js'

/** Every entry, by owner: the reads (`trace/reads.ts`), the content writes (`trace/writes.ts`), the tree changes (`trace/tree.ts`). */
export const TRACE: OwnerTraces = withGenerative({ ...READ_TRACE, ...WRITE_TRACE, ...TREE_TRACE })

/** Each rule's trace with the generative tests that also check it ({@link GENERATIVE_TRACE}); a rule named there must exist. */
function withGenerative(traces: OwnerTraces): OwnerTraces {
  const out: Record<string, Record<string, RuleTrace>> = Object.fromEntries(Object.entries(traces).map(([owner, rules]) => [owner, { ...rules }]))
  for (const [owner, rules] of Object.entries(GENERATIVE_TRACE)) {
    for (const [rule, tests] of Object.entries(rules)) {
      const trace = out[owner]?.[rule]
      if (trace === undefined) throw new Error(`trace/generative.ts names a rule ${owner} does not have: ${rule}`)
      out[owner]![rule] = Array.isArray(trace)
        ? [...(trace as readonly string[]), ...tests]
        : { ...(trace as { tests: readonly string[]; note: string }), tests: [...(trace as { tests: readonly string[] }).tests, ...tests] }
    }
  }
  return out
}

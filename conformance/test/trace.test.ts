import { readFileSync, writeFileSync } from 'node:fs'
import { fileURLToPath } from 'node:url'
import ts from 'typescript'
import { describe, expect, it, type RunnerTask, type RunnerTestFile } from 'vitest'
import type { FsCapabilities } from '@seamfs/core'
import { describeConformance, type ExternalHooks } from '@seamfs/conformance'
import { MapFileSystem } from '../examples/map-file-system.js'
import { TRACE, type RuleTrace } from '../src/trace.js'
import { GENERATIVE_TRACE } from '../src/trace/generative.js'

// Traceability: every rule line of the contract's TSDoc → the kit tests that check it (the table
// in src/trace.ts), rendered into conformance/README.md between the trace markers. The rule lines
// are parsed from core's sources with the TypeScript parser; the kit's test titles are the ones it
// really registers (describeConformance, collected under describe.skip: the skipped tests in this
// file's report are that collection, never run).

const REGENERATE = 'UPDATE_TRACE=1 npx vitest run conformance/test/trace.test.ts'
const ROOT = new URL('../../', import.meta.url)
const SOURCES = ['packages/core/src/file-system.ts', 'packages/core/src/types.ts']
const README = fileURLToPath(new URL('conformance/README.md', ROOT))
const START = '<!-- trace:start -->'
const END = '<!-- trace:end -->'

// ---- the rule lines: `- ` bullets in the TSDoc of a declaration ----

interface RuleLine {
  /** `FileSystem` (the class: rules common to every method), `FileSystem.readText`, `FsWriteOutcome.before`… */
  readonly owner: string
  readonly common: boolean
  /** The bullet's text, continuation lines joined, without the final `;` or `.`. */
  readonly text: string
  readonly where: string
}

const BULLET = /^\s*- /

/** The bullets of one `/** … *\/` comment, with the 1-based line each starts on. */
function bulletsOf(comment: string, firstLine: number): { text: string; line: number }[] {
  const lines = comment
    .replace(/^\/\*\*/, '')
    .replace(/\*\/$/, '')
    .split('\n')
    .map((line) => line.replace(/^\s*\* ?/, '').replace(/^\s*\*$/, ''))
  const out: { text: string; line: number }[] = []
  let open: { parts: string[]; line: number } | undefined
  const close = (): void => {
    if (open !== undefined) out.push({ text: open.parts.join(' ').replace(/\s+/g, ' ').trim().replace(/[;.]$/, ''), line: open.line })
    open = undefined
  }
  lines.forEach((line, i) => {
    if (BULLET.test(line)) {
      close()
      open = { parts: [line.replace(BULLET, '')], line: firstLine + i }
    } else if (open !== undefined && /^\s+\S/.test(line) && !/^\s*@/.test(line)) {
      open.parts.push(line.trim())
    } else {
      close()
    }
  })
  close()
  return out
}

function nameOf(node: ts.Node): string | undefined {
  if (ts.isConstructorDeclaration(node)) return 'constructor'
  const named =
    ts.isClassDeclaration(node) ||
    ts.isInterfaceDeclaration(node) ||
    ts.isTypeAliasDeclaration(node) ||
    ts.isEnumDeclaration(node) ||
    ts.isFunctionDeclaration(node) ||
    ts.isMethodDeclaration(node) ||
    ts.isMethodSignature(node) ||
    ts.isPropertyDeclaration(node) ||
    ts.isPropertySignature(node) ||
    ts.isGetAccessorDeclaration(node) ||
    ts.isSetAccessorDeclaration(node) ||
    ts.isVariableDeclaration(node)
  return named && node.name !== undefined ? node.name.getText() : undefined
}

/** Every rule line of one source file, and any bullet in a TSDoc comment that no declaration owns (`stray`). */
function ruleLinesOf(path: string, text: string): { rules: RuleLine[]; stray: string[] } {
  const source = ts.createSourceFile(path, text, ts.ScriptTarget.Latest, true)
  const lineOf = (pos: number): number => source.getLineAndCharacterOfPosition(pos).line + 1
  const rules: (RuleLine & { line: number })[] = []
  const seen = new Set<number>()
  const visit = (node: ts.Node, container: string | undefined): void => {
    const name = nameOf(node)
    if (name !== undefined) {
      for (const doc of ts.getJSDocCommentsAndTags(node)) {
        if (!ts.isJSDoc(doc) || seen.has(doc.pos)) continue
        seen.add(doc.pos)
        const start = doc.getStart(source)
        for (const bullet of bulletsOf(text.slice(start, doc.end), lineOf(start))) {
          const common = ts.isClassDeclaration(node)
          rules.push({
            owner: container === undefined ? name : `${container}.${name}`,
            common,
            text: bullet.text,
            where: `${path}:${bullet.line}`,
            line: bullet.line,
          })
        }
      }
    }
    const inner = ts.isClassDeclaration(node) || ts.isInterfaceDeclaration(node) ? name : container
    ts.forEachChild(node, (child) => visit(child, inner))
  }
  visit(source, undefined)

  const parsed = new Set(rules.map((r) => r.line))
  const stray: string[] = []
  for (const match of text.matchAll(/\/\*\*[\s\S]*?\*\//g)) {
    for (const bullet of bulletsOf(match[0], lineOf(match.index))) {
      if (!parsed.has(bullet.line)) stray.push(`${path}:${bullet.line}: ${bullet.text}`)
    }
  }
  return { rules: rules.map(({ line: _line, ...rule }) => rule), stray }
}

// ---- the kit's tests, as registered: describeConformance under describe.skip (collected, never run) ----
// Two capability profiles, all hooks then none, so a test the kit registers only for some
// backends is seen too; the subject is the Map example with its capabilities replaced.

const PROFILES: readonly FsCapabilities[] = [
  {
    symlinks: true,
    permissions: true,
    processPath: true,
    createIfAbsent: 'atomic',
    replaceIfVersion: 'atomic',
    versionSource: 'revision',
    newlineInNames: true,
    emptyDirectories: true,
  },
  {
    symlinks: false,
    permissions: false,
    processPath: false,
    createIfAbsent: 'process',
    replaceIfVersion: 'process',
    versionSource: 'stat',
    newlineInNames: false,
    emptyDirectories: false,
  },
]
const never = (): never => {
  throw new Error('collected for the trace, never run')
}
const EXTERNAL: ExternalHooks = { writeBytes: never, readBytes: never, remove: never, symlink: never }
const COLLECTED = 'the kit, collected for the trace (never run)'

describe.skip(COLLECTED, async () => {
  for (const [i, caps] of PROFILES.entries()) {
    class Profiled extends MapFileSystem {
      override readonly capabilities = caps
    }
    await describeConformance({ name: `profile ${i}`, create: () => ({ fs: new Profiled() }), external: i === 0 ? EXTERNAL : {} })
  }
})

interface KitTest {
  readonly clause: string
  readonly title: string
}

const SKIP_NOTE = /\s*\(skipped: .*\)$/

/** Every test the kit registered, by clause (its top-level group) and title, skip notes removed. */
function kitTests(file: RunnerTestFile): KitTest[] {
  const root = file.tasks.find((t) => t.name === COLLECTED)
  if (root?.type !== 'suite') throw new Error('the kit was not collected')
  const out = new Map<string, KitTest>()
  const walk = (task: RunnerTask, chain: readonly string[]): void => {
    const name = task.name.replace(SKIP_NOTE, '')
    if (task.type === 'suite') for (const child of task.tasks) walk(child, [...chain, name])
    else out.set(`${chain[1] ?? ''}\0${name}`, { clause: chain[1] ?? chain[0] ?? '', title: name })
  }
  for (const profile of root.tasks) walk(profile, [])
  return [...out.values()]
}

// ---- the trace ----

const testsOf = (trace: RuleTrace): readonly string[] => ('tests' in trace ? trace.tests : trace)
const noteOf = (trace: RuleTrace): string | undefined => ('note' in trace ? trace.note : undefined)

const escapeRegExp = (text: string): string => text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')
/** A pattern matching exactly `text`, `*` standing for any text. */
const pattern = (text: string): RegExp => new RegExp(`^${text.split('*').map(escapeRegExp).join('.*')}$`, 's')

/** A reference (`title` or `clause › title`) split in two, with a test for the kit tests it names. */
function parseReference(reference: string): { title: string; names: (test: KitTest) => boolean } {
  const at = reference.indexOf(' › ')
  const [clause, title] = at < 0 ? ['*', reference] : [reference.slice(0, at), reference.slice(at + 3)]
  const [clauseIs, titleIs] = [pattern(clause), pattern(title)]
  return { title, names: (test) => clauseIs.test(test.clause) && titleIs.test(test.title) }
}

/** What a reference names, as `clause › title` per clause it matches; empty: no such test. */
function namedBy(reference: string, tests: readonly KitTest[]): string[] {
  const { title, names } = parseReference(reference)
  return [...new Set(tests.filter(names).map((t) => t.clause))].map((c) => `${c} › ${title}`)
}

/** The kit tests no trace entry names (they check no rule line, or the trace misses them). */
function untraced(tests: readonly KitTest[]): KitTest[] {
  const references = Object.values(TRACE).flatMap((entries) => Object.values(entries).flatMap((trace) => testsOf(trace).map(parseReference)))
  return tests.filter((t) => !references.some((ref) => ref.names(t)))
}

const quote = (text: string): string => `'${text.replaceAll('\\', '\\\\').replaceAll("'", "\\'")}'`

// ---- the Markdown section ----

const cell = (text: string): string => text.replaceAll('|', '\\|').replaceAll('\n', ' ')
/** A test title as Markdown text; the `*` of a pattern shows as `…`. */
const titleCell = (text: string): string => cell(text.replace(/[\\`*<>[\]]/g, '\\$&')).replaceAll('\\*', '…')

function render(rules: readonly RuleLine[], tests: readonly KitTest[]): string {
  const untested = rules.filter((r) => testsOf(TRACE[r.owner]?.[r.text] ?? []).length === 0).length
  const out = [
    START,
    `<!-- Generated from the TSDoc of ${SOURCES.join(' and ')} and the table in src/trace.ts; checked by test/trace.test.ts. Do not edit: change src/trace.ts, then run ${REGENERATE} -->`,
    '<!-- prettier-ignore-start -->',
    '',
    '## Traceability',
    '',
    'Each rule line of the contract (a `- ` line in the TSDoc of `FileSystem` and its types) and the kit tests that check it, as',
    '`clause › test`; `…` stands for any text (every row of a table-driven clause, a seed in a title). The table is in',
    '`src/trace.ts`; `test/trace.test.ts` fails on a rule without a test and keeps this section in sync.',
    `${rules.length} rules; ${untested === 0 ? 'every one has a test' : `${untested} without a test yet`}.`,
  ]
  const owners = [...new Set(rules.map((r) => r.owner))]
  for (const owner of owners) {
    const own = rules.filter((r) => r.owner === owner)
    out.push('', `### \`${owner}\`${own[0]?.common === true ? ' (every method)' : ''}`, '', '| rule | checked by |', '| --- | --- |')
    for (const rule of own) {
      const trace = TRACE[owner]?.[rule.text] ?? []
      const refs = testsOf(trace).map((ref) => {
        const named = namedBy(ref, tests)
        return named.length === 0 ? `${titleCell(ref)} (**not in the kit**)` : named.map(titleCell).join('<br>')
      })
      const note = noteOf(trace)
      const checked = refs.length === 0 ? '**no test yet**' : refs.join('<br>')
      out.push(`| ${cell(rule.text)} | ${checked}${note === undefined ? '' : `<br>_Not checked yet: ${cell(note)}_`} |`)
    }
  }
  const loose = untraced(tests)
  out.push('', `### Kit tests that trace to no rule line (${loose.length})`, '')
  out.push(...loose.map((t) => `- ${titleCell(t.clause)} › ${titleCell(t.title)}`))
  out.push('', '<!-- prettier-ignore-end -->', END)
  return out.join('\n')
}

// ---- the checks ----

const parsed = SOURCES.map((path) => ruleLinesOf(path, readFileSync(fileURLToPath(new URL(path, ROOT)), 'utf8')))
const rules = parsed.flatMap((p) => p.rules)

describe('traceability: every contract rule line has a kit test', () => {
  it('the parser reads bullets, joins continuation lines and names their owner', () => {
    const source = [
      '/**',
      ' * A class. Prose is not a rule:',
      ' * - first rule;',
      ' * - second rule, which goes',
      ' *   on a second line.',
      ' *',
      ' * More prose.',
      ' */',
      'export abstract class Thing {',
      '  /** One line, no rule. */',
      '  abstract a(): void',
      '  /**',
      '   * A method.',
      '   * - a `code` rule',
      '   */',
      '  protected async b(x: string): Promise<void> {}',
      '}',
      '/** A type.\n * - a type rule\n */',
      'export interface Shape {',
      '  /**\n   * - a property rule\n   */',
      '  readonly size?: number',
      '}',
      '/**\n * - owned by nothing\n */',
    ].join('\n')
    const { rules: found, stray } = ruleLinesOf('x.ts', source)
    expect(found.map((r) => [r.owner, r.common, r.text, r.where])).toEqual([
      ['Thing', true, 'first rule', 'x.ts:3'],
      ['Thing', true, 'second rule, which goes on a second line', 'x.ts:4'],
      ['Thing.b', false, 'a `code` rule', 'x.ts:14'],
      ['Shape', false, 'a type rule', 'x.ts:19'],
      ['Shape.size', false, 'a property rule', 'x.ts:23'],
    ])
    expect(stray).toEqual(['x.ts:28: owned by nothing'])
  })

  it('the rule lines are found, each in the TSDoc of a declaration, none twice under one owner', () => {
    expect(
      parsed.flatMap((p) => p.stray),
      'rule lines in a TSDoc comment that no declaration owns',
    ).toEqual([])
    expect(rules.length).toBeGreaterThan(40)
    const keys = rules.map((r) => `${r.owner}: ${r.text}`)
    expect(keys.filter((k, i) => keys.indexOf(k) !== i)).toEqual([])
  })

  it('every rule line has a trace entry naming at least one test (src/trace.ts)', () => {
    const missing = rules.filter((r) => testsOf(TRACE[r.owner]?.[r.text] ?? []).length === 0)
    const shown = missing.map((r) => `  ${r.where} — ${quote(r.owner)}: { ${quote(r.text)}: [/* kit test titles */] }`)
    expect(missing.length, `rule lines without a test in src/trace.ts:\n${shown.join('\n')}\n`).toBe(0)
  })

  it('every rule line is also checked over its input space: an entry in src/trace/generative.ts (issue 32)', () => {
    const missing = rules.filter((r) => (GENERATIVE_TRACE[r.owner]?.[r.text] ?? []).length === 0)
    if (missing.length > 0)
      expect.fail(`rule lines checked on hand-picked inputs only:\n${missing.map((r) => `  ${r.where} — ${quote(r.owner)}: ${quote(r.text)}`).join('\n')}`)
  })

  it('every trace entry names a rule line that still exists (a rule edited or removed must be re-traced)', () => {
    const current = new Set(rules.map((r) => `${r.owner}\0${r.text}`))
    const stale = Object.entries(TRACE).flatMap(([owner, entries]) =>
      Object.keys(entries)
        .filter((text) => !current.has(`${owner}\0${text}`))
        .map((text) => `  ${quote(owner)}: ${quote(text)}`),
    )
    expect(stale.length, `trace entries whose rule line is gone from the TSDoc:\n${stale.join('\n')}\n`).toBe(0)
  })

  it('every test a trace entry names is registered by the kit', ({ task }) => {
    const tests = kitTests(task.file)
    expect(tests.length).toBeGreaterThan(50)
    const unknown = Object.entries(TRACE).flatMap(([owner, entries]) =>
      Object.entries(entries).flatMap(([text, trace]) =>
        testsOf(trace)
          .filter((ref) => namedBy(ref, tests).length === 0)
          .map((ref) => `  ${quote(ref)} (for ${owner}: ${text})`),
      ),
    )
    expect(unknown.length, `trace entries naming tests the kit does not register:\n${unknown.join('\n')}\n`).toBe(0)
  })

  it('conformance/README.md holds the generated traceability section', ({ task }) => {
    const section = render(rules, kitTests(task.file))
    const readme = readFileSync(README, 'utf8')
    const [start, end] = [readme.indexOf(START), readme.indexOf(END)]
    const current = start < 0 || end < start ? undefined : readme.slice(start, end + END.length)
    if (process.env['UPDATE_TRACE'] === '1') {
      const updated = current === undefined ? `${readme.trimEnd()}\n\n${section}\n` : readme.replace(current, () => section)
      if (updated !== readme) writeFileSync(README, updated)
      return
    }
    expect(current, `conformance/README.md has no ${START} … ${END} section; generate it with: ${REGENERATE}`).toBeDefined()
    expect(current, `conformance/README.md's traceability section is out of date; regenerate it with: ${REGENERATE}`).toBe(section)
  })
})

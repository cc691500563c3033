/**
 * Docs that cannot drift: every list and count in the Markdown docs that the code can give is
 * checked against the code here (6 of 14 hand-kept claims were once found stale). It lives in the
 * CLI's tests because the CLI is the package that depends on every package the docs describe.
 *
 * What is derived, and from where:
 * - the names of `@seamfs/core` and `@seamfs/core/backend`: the values from `Object.keys` of the
 *   modules, the types from the TypeScript checker over core's sources. ARCHITECTURE.md holds them
 *   in a generated block (`<!-- generated: core-exports -->`); on failure the expected block is
 *   printed, to paste in;
 * - error codes (`FS_ERROR_CODES`), capability keys (the properties of `FsCapabilities`, read by
 *   the checker), the protected hooks of `FileSystem`, `FsError`'s named constructors;
 * - each backend's declared `capabilities` against its README's table, each backend's config
 *   `fields` against the CLI README's tables, the tools' `DEFAULT_CONFIG`, the tool names
 *   (`createFileToolsByName` on a backend with every capability), `EXECUTED_NAMES`;
 * - the workspaces against README.md's package table and layout, the root scripts against
 *   CONTRIBUTING.md, and the counts the docs state ("N names", "over N backends", "about N lines").
 *
 * The checks read prose by anchors (a heading, the sentence that opens a list): moving or
 * rewording an anchor fails the test with the anchor it looked for, never passes silently.
 */
import { readFileSync, readdirSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { fileURLToPath } from 'node:url'
import ts from 'typescript'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import * as core from '@seamfs/core'
import * as coreBackend from '@seamfs/core/backend'
import { EXECUTED_NAMES, FS_ERROR_CODES, type FileSystem } from '@seamfs/core'
import { LocalFileSystem } from '@seamfs/backend-local'
import { MemoryFileSystem } from '@seamfs/backend-memory'
import { S3FileSystem } from '@seamfs/backend-s3'
import { SftpFileSystem } from '@seamfs/backend-ssh'
import { DEFAULT_CONFIG, createFileToolsByName } from '@seamfs/tools'
import * as mcp from '@seamfs/mcp'
import { BACKENDS, backendDefinition } from '../src/backends.js'
import { buildProgram } from '../src/cli.js'

const ROOT = new URL('../../../', import.meta.url)
const path = (relative: string): string => fileURLToPath(new URL(relative, ROOT))
const read = (relative: string): string => readFileSync(path(relative), 'utf8')
const json = (relative: string): Record<string, unknown> => JSON.parse(read(relative)) as Record<string, unknown>

const sorted = (names: Iterable<string>): string[] => [...names].sort((a, b) => (a < b ? -1 : a > b ? 1 : 0))
const difference = (a: Iterable<string>, b: Iterable<string>): string[] => {
  const other = new Set(b)
  return sorted([...a].filter((x) => !other.has(x)))
}

// ---- reading Markdown ----

/** The text between `start` and the first `end` after it (both left out); fails naming the anchor that is missing. */
function between(doc: string, file: string, start: string, end: string): string {
  const from = doc.indexOf(start)
  expect(from, `${file}: the anchor ${JSON.stringify(start)} is gone`).toBeGreaterThanOrEqual(0)
  const to = doc.indexOf(end, from + start.length)
  expect(to, `${file}: the anchor ${JSON.stringify(end)} after ${JSON.stringify(start)} is gone`).toBeGreaterThan(from)
  return doc.slice(from + start.length, to)
}

/** The section under a heading line (`## Capabilities`), up to the next heading of the same or a higher level. */
function section(doc: string, file: string, heading: string): string {
  const level = /^#+/.exec(heading)?.[0].length ?? 0
  const lines = doc.split('\n')
  const at = lines.indexOf(heading)
  expect(at, `${file}: the heading ${JSON.stringify(heading)} is gone`).toBeGreaterThanOrEqual(0)
  const rest = lines.slice(at + 1)
  const next = rest.findIndex((line) => {
    const hashes = /^(#+) /.exec(line)?.[1]
    return hashes !== undefined && hashes.length <= level
  })
  return rest.slice(0, next < 0 ? undefined : next).join('\n')
}

/** The rows of the first table in `text`, as cells (header and separator dropped; `\|` kept inside a cell). */
function tableRows(text: string): string[][] {
  const lines = text.split('\n')
  const first = lines.findIndex((line) => line.trimStart().startsWith('|'))
  expect(first, 'a table').toBeGreaterThanOrEqual(0)
  const rows: string[][] = []
  for (const line of lines.slice(first + 2)) {
    if (!line.trimStart().startsWith('|')) break
    rows.push(
      line
        .trim()
        .slice(1, -1)
        .split(/(?<!\\)\|/)
        .map((cell) => cell.trim()),
    )
  }
  return rows
}

/** The contents of every `code span` in `text`. */
const codeSpans = (text: string): string[] => [...text.matchAll(/`([^`\n]+)`/g)].map((m) => m[1] ?? '')

/** The `FS_…` codes named in `text`. */
const codesIn = (text: string): string[] => [...text.matchAll(/\bFS_[A-Z_]+\b/g)].map((m) => m[0]).filter((code) => code !== 'FS_ERROR_CODES')

const DOCS: readonly string[] = [
  'README.md',
  'ARCHITECTURE.md',
  'CONTRIBUTING.md',
  'conformance/README.md',
  ...readdirSync(path('packages'))
    .map((name) => `packages/${name}/README.md`)
    .filter((file) => {
      try {
        read(file)
        return true
      } catch {
        return false
      }
    }),
]

// ---- the code, as the TypeScript checker sees it ----

interface CoreModel {
  /** Every name each entry exports, values and types. */
  readonly names: Readonly<Record<'core' | 'backend' | 'opentelemetry', readonly string[]>>
  /** Every member name of every exported class, interface or object type (instance and static sides). */
  readonly members: ReadonlySet<string>
  readonly capabilities: readonly { readonly name: string; readonly optional: boolean }[]
  /** The protected instance methods of `FileSystem`: its hooks. */
  readonly hooks: readonly { readonly name: string; readonly abstract: boolean }[]
  /** `FileSystemHooks`' keys: the hooks a layer forwards. */
  readonly forwarded: readonly string[]
  /** `FsError`'s static methods that build an `FsError` from facts (not from another `FsError`). */
  readonly constructors: readonly string[]
  /** The public instance methods of `FileSystem`. */
  readonly methods: readonly string[]
}

function coreModel(): CoreModel {
  const entries = {
    core: path('packages/core/src/index.ts'),
    backend: path('packages/core/src/backend.ts'),
    opentelemetry: path('packages/core/src/opentelemetry.ts'),
  }
  const program = ts.createProgram(Object.values(entries), {
    target: ts.ScriptTarget.ES2022,
    module: ts.ModuleKind.NodeNext,
    moduleResolution: ts.ModuleResolutionKind.NodeNext,
    strict: true,
    noEmit: true,
    skipLibCheck: true,
    types: ['node'],
  })
  const checker = program.getTypeChecker()
  const exportsOf = (file: string): ts.Symbol[] => {
    const source = program.getSourceFile(file)
    const symbol = source === undefined ? undefined : checker.getSymbolAtLocation(source)
    expect(symbol, `the TypeScript checker reads ${file}`).toBeDefined()
    return checker.getExportsOfModule(symbol!)
  }
  const resolved = (symbol: ts.Symbol): ts.Symbol => (symbol.flags & ts.SymbolFlags.Alias ? checker.getAliasedSymbol(symbol) : symbol)
  const backendExports = exportsOf(entries.backend)
  const byName = new Map(backendExports.map((s) => [s.name, resolved(s)]))
  const declared = (name: string): ts.Type => {
    const symbol = byName.get(name)
    expect(symbol, `@seamfs/core/backend exports ${name}`).toBeDefined()
    return checker.getDeclaredTypeOfSymbol(symbol!)
  }

  const members = new Set<string>()
  for (const symbol of byName.values()) {
    const types: ts.Type[] = []
    if (symbol.flags & (ts.SymbolFlags.Class | ts.SymbolFlags.Interface | ts.SymbolFlags.TypeAlias)) types.push(checker.getDeclaredTypeOfSymbol(symbol))
    if (symbol.flags & (ts.SymbolFlags.Class | ts.SymbolFlags.Function | ts.SymbolFlags.Variable)) types.push(checker.getTypeOfSymbol(symbol))
    for (const type of types) for (const part of type.isUnion() ? type.types : [type]) for (const p of checker.getPropertiesOfType(part)) members.add(p.name)
  }

  const capabilities = checker
    .getPropertiesOfType(declared('FsCapabilities'))
    .map((p) => ({ name: p.name, optional: (p.flags & ts.SymbolFlags.Optional) !== 0 }))
  const forwarded = checker.getPropertiesOfType(declared('FileSystemHooks')).map((p) => p.name)

  const classOf = (name: string): ts.ClassDeclaration => {
    const declaration = byName.get(name)?.declarations?.find(ts.isClassDeclaration)
    expect(declaration, `${name} is a class`).toBeDefined()
    return declaration!
  }
  const has = (node: ts.Node, kind: ts.SyntaxKind): boolean => (ts.canHaveModifiers(node) ? (ts.getModifiers(node) ?? []).some((m) => m.kind === kind) : false)
  // The hooks are declared on the class FileSystem extends: every protected instance method of its type.
  const hooks = checker
    .getPropertiesOfType(declared('FileSystem'))
    .map((p) => p.valueDeclaration)
    .filter(
      (m): m is ts.MethodDeclaration =>
        m !== undefined && ts.isMethodDeclaration(m) && has(m, ts.SyntaxKind.ProtectedKeyword) && !has(m, ts.SyntaxKind.StaticKeyword),
    )
    .map((m) => ({ name: m.name.getText(), abstract: has(m, ts.SyntaxKind.AbstractKeyword) }))

  const isPublic = (m: ts.ClassElement): m is ts.MethodDeclaration =>
    ts.isMethodDeclaration(m) &&
    !ts.isPrivateIdentifier(m.name) &&
    ![ts.SyntaxKind.ProtectedKeyword, ts.SyntaxKind.PrivateKeyword, ts.SyntaxKind.StaticKeyword].some((kind) => has(m, kind))
  const methods = classOf('FileSystem')
    .members.filter(isPublic)
    .map((m) => m.name.getText())

  const fsErrorType = declared('FsError')
  const constructors = classOf('FsError')
    .members.filter((m): m is ts.MethodDeclaration => ts.isMethodDeclaration(m) && has(m, ts.SyntaxKind.StaticKeyword) && !ts.isPrivateIdentifier(m.name))
    .filter((m) => {
      const signature = checker.getSignatureFromDeclaration(m)
      if (signature === undefined || checker.getReturnTypeOfSignature(signature) !== fsErrorType) return false
      const first = m.parameters[0]
      return first === undefined || checker.getTypeAtLocation(first) !== fsErrorType
    })
    .map((m) => m.name.getText())

  return {
    names: {
      core: exportsOf(entries.core).map((s) => s.name),
      backend: backendExports.map((s) => s.name),
      opentelemetry: exportsOf(entries.opentelemetry).map((s) => s.name),
    },
    members,
    capabilities,
    hooks,
    forwarded,
    constructors,
    methods,
  }
}

let model: CoreModel
beforeAll(() => {
  model = coreModel()
}, 60_000)

// ---- the entry points of @seamfs/core ----

const VALUES = { core: Object.keys(core), backend: Object.keys(coreBackend) }

/** The names of one entry, values apart from types (a type-only export is a type, `FsTargetKey` in `@seamfs/core`). */
function entryNames(entry: 'core' | 'backend', minus: readonly string[] = []): { values: string[]; types: string[] } {
  const values = new Set(VALUES[entry])
  const names = difference(model.names[entry], minus)
  return { values: names.filter((n) => values.has(n)), types: names.filter((n) => !values.has(n)) }
}

/** Code spans, comma-separated, wrapped before 100 columns as continuation lines of a list item. */
function wrapped(label: string, names: readonly string[]): string {
  const lines: string[] = []
  let line = `- ${label} (${names.length}):`
  for (const [i, name] of names.entries()) {
    const word = ` \`${name}\`${i === names.length - 1 ? '' : ','}`
    if (line.length + word.length > 100) {
      lines.push(line)
      line = ` ${word}`
    } else line += word
  }
  lines.push(line)
  return lines.join('\n')
}

const BLOCK_START = '<!-- generated: core-exports (packages/cli/test/docs.test.ts prints this block when the exports change) -->'
const BLOCK_END = '<!-- /generated: core-exports -->'

function coreExportsBlock(): string {
  const consumer = entryNames('core')
  const more = entryNames('backend', model.names.core)
  // A name exported as a type by `@seamfs/core` and as a value too by the backend entry (`FsTargetKey`) is not new there.
  return [
    BLOCK_START,
    '',
    `**\`@seamfs/core\`** (${model.names.core.length} names):`,
    '',
    wrapped('values', consumer.values),
    wrapped('types', consumer.types),
    '',
    `**\`@seamfs/core/backend\`** (${model.names.backend.length} names): every name of \`@seamfs/core\`, plus`,
    '',
    wrapped('values', more.values),
    wrapped('types', more.types),
    '',
    BLOCK_END,
  ].join('\n')
}

describe('the entry points of @seamfs/core', () => {
  it('ARCHITECTURE.md lists every name each entry exports (the generated block)', () => {
    const doc = read('ARCHITECTURE.md')
    const expected = coreExportsBlock()
    const start = doc.indexOf(BLOCK_START)
    const end = doc.indexOf(BLOCK_END)
    const actual = start < 0 || end < 0 ? '(no block)' : doc.slice(start, end + BLOCK_END.length)
    expect(actual, `ARCHITECTURE.md: replace the core-exports block with:\n\n${expected}\n`).toBe(expected)
  })

  it('"N names" of an entry is its count of names', () => {
    for (const file of DOCS) {
      for (const m of read(file).matchAll(/\*\*`(@seamfs\/core(?:\/backend)?)`\*\*[^\n]*?\((?:[a-z ]+, )?(\d+) names/g)) {
        const entry = m[1] === '@seamfs/core' ? 'core' : 'backend'
        expect(Number(m[2]), `${file}: ${m[0]}`).toBe(model.names[entry].length)
      }
    }
  })

  it('the heading counts the entry points of the package', () => {
    const exportsOf = Object.keys(json('packages/core/package.json').exports as object)
    const words = ['zero', 'One', 'Two', 'Three', 'Four', 'Five']
    expect(read('ARCHITECTURE.md')).toContain(`## ${words[exportsOf.length] ?? exportsOf.length} entry points of \`@seamfs/core\``)
  })

  it('every name the entry-point sections put in code exists (an export, a member of one, or a code)', () => {
    const known = new Set([...model.names.backend, ...model.names.opentelemetry, ...model.members, ...FS_ERROR_CODES, 'instanceof'])
    const sections = [
      ['ARCHITECTURE.md', section(read('ARCHITECTURE.md'), 'ARCHITECTURE.md', '## Three entry points of `@seamfs/core`')],
      ['packages/core/README.md', between(read('packages/core/README.md'), 'packages/core/README.md', 'Three entry points', '## Composition')],
    ] as const
    for (const [file, text] of sections) {
      const names = codeSpans(text)
        .filter((span) => !span.startsWith('@') && !span.includes('/') && !/^['"]/.test(span))
        .flatMap((span) => [...span.matchAll(/^\.?([A-Za-z_$][\w$]*)(?:\.([A-Za-z_$][\w$]*))?/g)].flatMap((m) => [m[1], m[2]]))
        .filter((name): name is string => name !== undefined)
      expect(difference(names, known), `${file}: names in code that nothing exports`).toEqual([])
    }
  })

  it('packages/core/README.md names the consumer entry only with its own names', () => {
    const text = between(read('packages/core/README.md'), 'packages/core/README.md', '**`@seamfs/core`**', '**`@seamfs/core/backend`**')
    const backendOnly = new Set(difference(model.names.backend, model.names.core))
    const named = codeSpans(text)
      .map((span) => /^[A-Za-z_$][\w$]*/.exec(span)?.[0])
      .filter((name): name is string => name !== undefined && backendOnly.has(name))
    expect(named, 'names of @seamfs/core/backend only, listed under @seamfs/core').toEqual([])
  })
})

// ---- the hooks and FsError's named constructors ----

describe('the hooks of FileSystem', () => {
  it("ARCHITECTURE.md's hook table has one row per protected hook", () => {
    const rows = tableRows(section(read('ARCHITECTURE.md'), 'ARCHITECTURE.md', '## The hooks'))
    const named = rows.map((row) => /^`([A-Za-z]+)\(/.exec(row[0] ?? '')?.[1] ?? `(unreadable: ${row[0]})`)
    expect(sorted(named)).toEqual(sorted(model.hooks.map((h) => h.name)))
  })

  it('the lists of hooks to implement name every abstract hook, and only hooks', () => {
    const hooks = new Set(model.hooks.map((h) => h.name))
    const abstract = model.hooks.filter((h) => h.abstract).map((h) => h.name)
    const lists = [
      [
        'packages/core/README.md',
        between(read('packages/core/README.md'), 'packages/core/README.md', 'the protected hooks of `FileSystem` to implement (', ')'),
      ],
      ['conformance/README.md', between(read('conformance/README.md'), 'conformance/README.md', 'implement its\n   protected hooks (', ')')],
    ] as const
    for (const [file, text] of lists) {
      const named = codeSpans(text)
      expect(difference(named, hooks), `${file}: not hooks`).toEqual([])
      expect(difference(abstract, named), `${file}: abstract hooks left out`).toEqual([])
    }
  })

  it('conformance/README.md names every hook a backend may implement', () => {
    const text = between(read('conformance/README.md'), 'conformance/README.md', '1. **Implement the contract.**', '2. **Write a factory.**')
    expect(difference(model.forwarded, codeSpans(text))).toEqual([])
  })

  it("ARCHITECTURE.md's step 6 names exactly FsError's named constructors", () => {
    const text = between(read('ARCHITECTURE.md'), 'ARCHITECTURE.md', "6. Throw the contract's failures", '7. Run the kit')
    const named = [...text.matchAll(/`(?:FsError)?\.([a-zA-Z]+)/g)].map((m) => m[1] ?? '')
    expect(sorted(new Set(named))).toEqual(sorted(model.constructors))
  })

  it("packages/core/README.md's named constructors exist", () => {
    const text = between(read('packages/core/README.md'), 'packages/core/README.md', "`FsError`'s named constructors", 'and `checkGuard`')
    const named = [...text.matchAll(/`(?:FsError)?\.([a-zA-Z]+)/g)].map((m) => m[1] ?? '')
    expect(named.length).toBeGreaterThan(0)
    expect(difference(named, model.constructors)).toEqual([])
  })
})

// ---- error codes ----

describe('error codes', () => {
  it('every FS_… code a doc names is one of FS_ERROR_CODES', () => {
    for (const file of DOCS) expect(difference(codesIn(read(file)), FS_ERROR_CODES), file).toEqual([])
  })

  it('the lists of every code name each code once', () => {
    const lists = [
      ['README.md', between(read('README.md'), 'README.md', 'Error codes: ', ' The rules of each method')],
      [
        'packages/tools/README.md',
        between(read('packages/tools/README.md'), 'packages/tools/README.md', "one of `@seamfs/core`'s `FS_ERROR_CODES`:", 'The message is the'),
      ],
    ] as const
    for (const [file, text] of lists) expect(sorted(codesIn(text)), file).toEqual(sorted(FS_ERROR_CODES))
  })

  it('a range of codes (`first` … `last`) starts and ends where FS_ERROR_CODES does', () => {
    for (const file of DOCS) {
      for (const m of read(file).matchAll(/`(FS_[A-Z_]+)` … `(FS_[A-Z_]+)`/g)) {
        expect([m[1], m[2]], `${file}: ${m[0]}`).toEqual([FS_ERROR_CODES[0], FS_ERROR_CODES.at(-1)])
      }
    }
  })
})

// ---- capabilities ----

/** A filesystem of each backend, built without a server (S3's capabilities before its probe). */
const backends: { readme: string; fs: FileSystem }[] = []
beforeAll(() => {
  backends.push(
    { readme: 'packages/backend-local/README.md', fs: new LocalFileSystem({ cwd: tmpdir() }) },
    { readme: 'packages/backend-memory/README.md', fs: new MemoryFileSystem() },
    {
      readme: 'packages/backend-s3/README.md',
      fs: new S3FileSystem({ bucket: 'docs', endpoint: 'http://127.0.0.1:9', region: 'us-east-1', credentials: { accessKeyId: 'x', secretAccessKey: 'y' } }),
    },
    { readme: 'packages/backend-ssh/README.md', fs: new SftpFileSystem({ host: '127.0.0.1', port: 9, username: 'docs', acceptAnyHostKey: true }) },
  )
})
afterAll(async () => {
  await Promise.all(backends.map(({ fs }) => fs.close()))
})

describe('capabilities', () => {
  it('each backend README has a row for every capability the backend declares, and only capability keys', () => {
    const keys = model.capabilities.map((c) => c.name)
    for (const { readme, fs } of backends) {
      const rows = tableRows(section(read(readme), readme, '## Capabilities'))
      const named = rows
        .map((row) => row[0] ?? '')
        .filter((cell) => !cell.startsWith('('))
        .flatMap((cell) => cell.split(/[\s,/]+/))
        .filter((word) => word !== '' && word !== 'and')
      expect(difference(named, keys), `${readme}: not capability keys`).toEqual([])
      expect(difference(Object.keys(fs.capabilities), named), `${readme}: declared by the backend, missing from the table`).toEqual([])
    }
  })

  it("ARCHITECTURE.md's step 3 names every required capability", () => {
    const text = between(read('ARCHITECTURE.md'), 'ARCHITECTURE.md', '3. Declare `capabilities` once', '4. Implement the hooks')
    const keys = new Set(model.capabilities.map((c) => c.name))
    const named = codeSpans(text).filter((span) => keys.has(span))
    expect(sorted(named)).toEqual(sorted(model.capabilities.filter((c) => !c.optional).map((c) => c.name)))
  })
})

// ---- configuration ----

describe('configuration', () => {
  const cli = (): string => read('packages/cli/README.md')

  it.each(Object.keys(BACKENDS))('the CLI README table of %s has exactly its fields, in order', async (type) => {
    const definition = await backendDefinition(type, 'backend.type')
    const heading = `#### \`${type}\` — \`${BACKENDS[type]?.package ?? '?'}\``
    const keys = tableRows(section(cli(), 'packages/cli/README.md', heading)).map((row) => (row[0] ?? '').replaceAll('`', ''))
    expect(keys).toEqual(definition.fields.map((f) => f.name))
  })

  it("the CLI README's `tools` keys are DEFAULT_CONFIG's, with its values", () => {
    const text = between(cli(), 'packages/cli/README.md', '`tools` keys and their defaults:', '\n\n')
    const listed = Object.fromEntries([...text.matchAll(/`(\w+)`\s+(\d+)/g)].map((m): [string, number] => [m[1] ?? '', Number(m[2])]))
    expect(listed).toEqual({ ...DEFAULT_CONFIG })
  })

  it("the tools README's caps table is DEFAULT_CONFIG, in order", () => {
    const rows = tableRows(section(read('packages/tools/README.md'), 'packages/tools/README.md', '## Caps and config'))
    const listed = rows.map((row) => [(row[0] ?? '').replaceAll('`', ''), Number(/\d+/.exec(row[1] ?? '')?.[0])] as const)
    expect(listed).toEqual(Object.entries(DEFAULT_CONFIG))
  })
})

// ---- the tools ----

describe('the tools', () => {
  // Memory declares every optional capability, so every tool is offered.
  const names = Object.keys(createFileToolsByName({ fs: new MemoryFileSystem(), sandbox: false }))
  const tools = read('packages/tools/README.md')
  const file = 'packages/tools/README.md'

  it('the tools README lists them in the order createFileTools returns them', () => {
    expect(codeSpans(between(tools, file, 'returns the tools in the order', ', each of these three'))).toEqual(names)
  })

  it("the tools README's tables have one row per tool, in order", () => {
    for (const heading of ['## The tools', '## Structured output']) {
      expect(
        tableRows(section(tools, file, heading)).map((row) => (row[0] ?? '').replaceAll('`', '')),
        heading,
      ).toEqual(names)
    }
  })

  it('README.md names every tool, and only tools', () => {
    const readme = read('README.md')
    const lists = [
      between(readme, 'README.md', 'the model-facing tools above (', ', also served'),
      between(readme, 'README.md', '`createFileTools` / `createFileToolsByName`: ', ' as plain tool objects'),
    ]
    for (const text of lists) {
      const listed = text.split(/[\s,()+]+/).filter((word) => word !== '')
      expect(sorted(listed), text).toEqual(sorted(names))
    }
  })
})

// ---- the contract's operations, the CLI's commands, the MCP building blocks ----

describe('operations and commands', () => {
  // Public methods of FileSystem that are not operations on the store: identity and lifecycle.
  const NOT_OPERATIONS = new Set(['processPath', 'fileUrl', 'contains', 'close'])

  it("README.md's summary of the contract names every operation of FileSystem", () => {
    const text = between(read('README.md'), 'README.md', 'an abstract\n`FileSystem` (', ') with interchangeable backends')
    const named = [...text.matchAll(/[A-Za-z]+/g)].map((m) => m[0]).filter((word) => model.methods.includes(word))
    expect(sorted(new Set(named))).toEqual(sorted(model.methods.filter((m) => !NOT_OPERATIONS.has(m))))
  })

  it("the CLI README's command table has one row per command", () => {
    const io = { stdout: () => {}, stderr: () => {}, stdin: () => Promise.resolve(''), cwd: tmpdir(), env: {} }
    const commands = buildProgram(io).program.commands.map((c) => c.name())
    const rows = tableRows(section(read('packages/cli/README.md'), 'packages/cli/README.md', '## Commands'))
    const listed = rows.map((row) => /^`seamfs ([\w-]+)/.exec(row[0] ?? '')?.[1] ?? `(unreadable: ${row[0]})`)
    // commander adds `help` itself.
    expect(sorted(listed)).toEqual(sorted([...commands, 'help']))
  })

  it("the MCP README's building blocks are exports of @seamfs/mcp", () => {
    const text = section(read('packages/mcp/README.md'), 'packages/mcp/README.md', '## Building blocks')
    const named = codeSpans(text)
      // A function is shown called (`toMcpTool(tool, …)`), a class by its name (`BoundedStdioTransport`).
      .map((span) => /^([a-z][\w$]*)\(|^([A-Z][a-z][\w$]*)$/.exec(span))
      .map((m) => m?.[1] ?? m?.[2])
      .filter((name): name is string => name !== undefined)
    expect(named.length).toBeGreaterThan(0)
    expect(difference(named, Object.keys(mcp))).toEqual([])
  })
})

// ---- what the fence keeps read-only ----

describe('EXECUTED_NAMES', () => {
  // Names a doc may cover with one phrase instead of listing them.
  const GROUPS: readonly { readonly phrase: string; readonly names: RegExp }[] = [
    { phrase: "lefthook's and lint-staged's configs", names: /lefthook|lint-?staged/ },
  ]
  // Code spans in these lists that are not entries of EXECUTED_NAMES.
  const NOT_ENTRIES = new Set(['DEFAULT_PROTECTED_NAMES', '.bin'])

  it.each([
    // The core README's table row: its second cell (the third is the option).
    ['packages/core/README.md', '| by name ', '\n', (row: string) => row.split('|')[1] ?? ''],
    ['packages/tools/README.md', "read-only to the model (core's `executes.ts`): by name (", '), by kind', (text: string) => text],
  ])('%s lists every name (or its group), and only those', (file, start, end, cell) => {
    const text = cell(between(read(file), file, start, end))
    const listed = codeSpans(text).filter((span) => !NOT_ENTRIES.has(span))
    expect(difference(listed, EXECUTED_NAMES), `${file}: not in EXECUTED_NAMES`).toEqual([])
    const grouped = GROUPS.filter((g) => text.includes(g.phrase))
    const missing = difference(EXECUTED_NAMES, listed).filter((name) => !grouped.some((g) => g.names.test(name)))
    expect(missing, `${file}: in EXECUTED_NAMES, not listed`).toEqual([])
  })
})

// ---- the repository: packages, scripts, counts ----

describe('the repository', () => {
  const workspaces = json('package.json').workspaces as string[]

  it("README.md's package table has one row per workspace, named as its package.json", () => {
    const rows = tableRows(section(read('README.md'), 'README.md', '## Packages'))
    const listed = rows.map((row) => [(row[1] ?? '').replaceAll('`', ''), /`([^`]+)`/.exec(row[0] ?? '')?.[1]])
    expect(sorted(listed.map(([folder]) => folder ?? ''))).toEqual(sorted(workspaces))
    for (const [folder, name] of listed) expect(name, folder).toBe(json(`${folder ?? ''}/package.json`).name)
  })

  it("README.md's layout names every workspace", () => {
    const layout = section(read('README.md'), 'README.md', '## Layout')
    const folders = layout.split('\n').map((line) => /^(\S+?)\/?\s/.exec(line)?.[1])
    expect(
      difference(
        workspaces,
        folders.filter((f): f is string => f !== undefined),
      ),
    ).toEqual([])
  })

  it("CONTRIBUTING.md's script table has every root script, and names no other", () => {
    const scripts = Object.keys(json('package.json').scripts as object)
    const table = section(read('CONTRIBUTING.md'), 'CONTRIBUTING.md', '## Scripts (root `package.json`)')
    const listed = tableRows(table).flatMap((row) => [...(row[0] ?? '').matchAll(/`npm (?:run )?([\w:-]+)`/g)].map((m) => m[1] ?? ''))
    expect(difference(scripts, listed), 'scripts missing from the table').toEqual([])
    for (const file of DOCS) {
      const named = [...read(file).matchAll(/\bnpm run ([\w:-]+)/g)].map((m) => m[1] ?? '')
      expect(difference(named, scripts), `${file}: npm run of no script`).toEqual([])
    }
  })

  it('"over N backends": the broken backends the kit is tested on', () => {
    const variants = read('conformance/test/broken.test.ts').match(/^\s*\{ file: '/gm)?.length ?? 0
    const claim = /over (\d+) backends/.exec(read('conformance/README.md'))
    expect(claim, 'conformance/README.md: "over N backends"').not.toBeNull()
    expect(variants).toBeGreaterThan(Number(claim?.[1]))
    expect(variants - Number(claim?.[1]), `rounded down to the ten below ${variants}`).toBeLessThan(10)
  })

  it('"about N lines": the Map example', () => {
    const lines = read('conformance/examples/map-file-system.ts').split('\n').length
    for (const file of ['ARCHITECTURE.md', 'conformance/README.md']) {
      const claim = /map-file-system\.ts[\s\S]{0,200}?about (\d+) lines/.exec(read(file))
      expect(claim, `${file}: "about N lines"`).not.toBeNull()
      expect(Math.abs(lines - Number(claim?.[1])) / lines, `${file}: about ${claim?.[1]} lines, has ${lines}`).toBeLessThan(0.1)
    }
  })
})

describe("the packages' READMEs, as the registry shows them", () => {
  it('link only to absolute URLs or their own anchors: a relative link breaks on the package page', () => {
    const readmes = [...readdirSync(path('packages')).map((dir) => `packages/${dir}/README.md`), 'conformance/README.md']
    const relative = readmes.flatMap((file) => [...read(file).matchAll(/\]\((?!https?:\/\/|#|mailto:)([^)]*)\)/g)].map((m) => `${file}: ${m[1]}`))
    expect(relative).toEqual([])
  })
})

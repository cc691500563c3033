/**
 * Fuzz of every tool createFileTools returns (list, read, write, edit, glob,
 * grep, read_files, tree, info, list_roots, and create_directory/move/delete where the backend offers them): arbitrary JSON-ish values, wrong types, odd
 * numbers and strings. `execute` must always resolve — a success, or
 * `isError` with an `Error: ` text and a known code (or none, for an input
 * error), never an internal error — and nothing outside the workspace may
 * change (the tools run behind the sandbox fence, which '../' chains, absolute
 * paths and a symlink out of the workspace all try to pass).
 */
import fc from 'fast-check'
import { describe, expect, it } from 'vitest'
import { FS_ERROR_CODES, SandboxedFileSystem } from '@seamfs/core'
import { MemoryFileSystem } from '@seamfs/backend-memory'
import { createFileTools, ObservationPolicy, type FileTool, type ToolContext, type ToolResult } from '@seamfs/tools'

const WORKSPACE = '/w/ws'
const RUNS = 300

/** A workspace with a bit of everything, a sibling tree and a file at the root, and a link out. */
function fixture(): { fs: MemoryFileSystem; tools: FileTool[] } {
  const fs = new MemoryFileSystem({
    cwd: WORKSPACE,
    files: {
      'a.txt': 'hello\nworld\nhello\n',
      'crlf.txt': 'one\r\ntwo\r\n',
      'empty.txt': '',
      'dir/': null,
      'dir/b.txt': 'b\n',
      bin: Uint8Array.of(0, 1, 2),
      'out-link': { symlink: '/w/out' },
      // in its own directory: the memory backend fails a whole listing that holds a link loop (local lists it as other)
      'loops/loop-link': { symlink: 'loop-link' },
    },
  })
  fs.volume.mkdirSync('/w/out', { recursive: true })
  fs.volume.writeFileSync('/w/out/secret.txt', 'secret\n')
  fs.volume.writeFileSync('/top.txt', 'top\n')
  fs.volume.writeFileSync('/w/ws-sibling.txt', 'sibling\n')
  const sandboxed = new SandboxedFileSystem(fs, { mode: 'workspace-write', workspaceRoot: WORKSPACE })
  const tools = createFileTools({ fs: sandboxed, policy: new ObservationPolicy(), cwd: WORKSPACE, config: { listMaxEntries: 4, readMaxBytes: 200 } })
  return { fs, tools }
}

/** Every file outside the workspace, with its content. */
function outside(fs: MemoryFileSystem): Record<string, unknown> {
  const all = fs.volume.toJSON() as Record<string, unknown>
  return Object.fromEntries(Object.entries(all).filter(([path]) => path !== WORKSPACE && !path.startsWith(`${WORKSPACE}/`)))
}

const TOOL_NAMES = fixture().tools.map((t) => t.name)

const loneSurrogates = fc.string({ unit: fc.constantFrom('\uD800', '\uDBFF', '\uDC00', '\uDFFF', 'a', '/', '.'), maxLength: 8 })
const oddString = fc.oneof(
  fc.constantFrom(
    'a.txt',
    'crlf.txt',
    'empty.txt',
    'dir',
    'dir/b.txt',
    'bin',
    'new.txt',
    'dir/new.txt',
    'out-link',
    'out-link/secret.txt',
    'out-link/new.txt',
    'loops',
    'loops/loop-link',
    '../out/secret.txt',
    '../out/new.txt',
    '../ws-sibling.txt',
    '../../top.txt',
    '/top.txt',
    '/w/out/secret.txt',
    '/new-at-root.txt',
    'dir/../../out/secret.txt',
    `${'../'.repeat(64)}top.txt`,
    `${'../'.repeat(64)}w/out/secret.txt`,
    '.',
    '..',
    '/',
    '',
    ' ',
    '\t\n',
    '\0',
    'a.txt\0',
    'a\0b',
    '\uD800',
    'x\uDFFF.txt',
    '~/x',
    'file:///top.txt',
    'C:\\top.txt',
    'dir\\b.txt',
    'x'.repeat(5000),
    'a/'.repeat(500),
    'hello',
    'world',
    'o',
    '\n',
    '\r\n',
  ),
  fc.string(),
  fc.string({ unit: 'binary', maxLength: 40 }),
  loneSurrogates,
)
const oddNumber = fc.oneof(
  fc.constantFrom(0, -0, -1, 1, 2, 3, 1.5, 0.5, Number.NaN, Number.POSITIVE_INFINITY, Number.NEGATIVE_INFINITY),
  fc.constantFrom(Number.MAX_SAFE_INTEGER, 2 ** 53, 1e308, -1e308, Number.MIN_VALUE, 2000, 2001, 1e9),
  fc.integer(),
  fc.double(),
)
const oddValue = fc.oneof(oddString, oddNumber, fc.boolean(), fc.constant(null), fc.constant(undefined), fc.anything({ maxDepth: 2 }))

const plausiblePath = fc.constantFrom('a.txt', 'crlf.txt', 'empty.txt', 'dir', 'dir/b.txt', 'new.txt', 'dir/new.txt', '.', '*.txt', '**/*')
const plausibleText = fc.constantFrom('hello', 'world', 'one', 'o', 'HELLO', '', 'x\n', 'two\r\n')
const plausibleNumber = fc.integer({ min: 1, max: 5 })

/** A value for one schema property: mostly plausible for its declared type, sometimes anything odd. */
function valueFor(key: string, schema: { type?: unknown }): fc.Arbitrary<unknown> {
  // an optional key is declared [type, 'null']
  const type: unknown = Array.isArray(schema.type) ? schema.type[0] : schema.type
  const plausible =
    type === 'integer' || type === 'number'
      ? plausibleNumber
      : type === 'boolean'
        ? fc.boolean()
        : type === 'string'
          ? /path|file|dir/.test(key)
            ? plausiblePath
            : fc.oneof(plausibleText, plausiblePath)
          : oddValue
  return fc.oneof({ weight: 3, arbitrary: plausible }, { weight: 2, arbitrary: oddValue })
}

/** Objects shaped like the tool's arguments (any subset of its schema's keys, now and then a stray one, which execute refuses). */
function argsFor(tool: FileTool): fc.Arbitrary<Record<string, unknown>> {
  const properties = (tool.inputSchema['properties'] ?? {}) as Record<string, { type?: unknown }>
  const shape: Record<string, fc.Arbitrary<unknown>> = {}
  for (const [key, schema] of Object.entries(properties)) shape[key] = valueFor(key, schema)
  const required = new Set((tool.inputSchema['required'] ?? []) as string[])
  const none = Symbol('no stray key')
  const stray = fc.oneof({ weight: 4, arbitrary: fc.constant(none) }, { weight: 1, arbitrary: oddValue })
  // required keys are usually there, optional ones often; any may be missing
  return fc.tuple(fc.record(shape, { requiredKeys: [] }), stray, fc.boolean()).map(([args, extra, complete]) => {
    if (extra !== none) args['extra'] = extra
    if (!complete) return args
    for (const key of required) if (!(key in args)) args[key] = key.endsWith('path') ? 'a.txt' : 'hello'
    return args
  })
}

/** One call per tool that must succeed (with a read first), seeded into the fuzz runs as an explicit example. */
const SURE_SUCCESS: Record<string, Record<string, unknown>> = {
  list: {},
  read: { file_path: 'a.txt' },
  write: { file_path: 'new.txt', content: 'x' },
  edit: { file_path: 'a.txt', old_string: 'world', new_string: 'WORLD' },
  glob: { pattern: '*.txt' },
  grep: { pattern: 'hello' },
  read_files: { file_paths: ['a.txt', 'dir/b.txt'] },
  tree: { path: 'dir' },
  info: { path: 'a.txt' },
  list_roots: {},
  create_directory: { path: 'dir/new' },
  move: { source_path: 'a.txt', destination_path: 'dir/moved.txt' },
  delete: { path: 'a.txt' },
}

const KNOWN_CODES = new Set<string>(FS_ERROR_CODES)

/** Calls without letting a synchronous throw or a rejection slip by, and checks the result's shape. */
async function callChecked(tool: FileTool, args: unknown, context?: ToolContext): Promise<ToolResult> {
  let pending: Promise<ToolResult> | undefined
  expect(() => {
    pending = tool.execute(args, context)
  }).not.toThrow()
  expect(pending).toBeInstanceOf(Promise)
  const result = await (pending as Promise<ToolResult>).then(
    (r) => r,
    (err: unknown) => {
      throw new Error(`${tool.name} rejected: ${String(err)}`)
    },
  )
  expect(typeof result.text).toBe('string')
  expect(typeof result.isError).toBe('boolean')
  if (result.isError) {
    expect(result.text.startsWith('Error: '), result.text).toBe(true)
    expect(result.text.startsWith('Error: internal error'), result.text).toBe(false)
    expect(result.value).toBeUndefined()
    if (result.code !== undefined) expect(KNOWN_CODES.has(result.code), result.code).toBe(true)
  } else {
    expect(result.text.length).toBeGreaterThan(0)
    expect(result.code).toBeUndefined()
    expect(result.value).toBeDefined()
    if (tool.name === 'list' || tool.name === 'read' || tool.name === 'write') expect(result.text.startsWith('<path>')).toBe(true)
    if (tool.name === 'edit') expect(result.text).toMatch(/^(The file |Dry run: nothing was written\. )/)
    if (tool.name === 'delete') expect(result.text).toMatch(/^Deleted (file|empty directory) /)
    if (tool.name === 'move') expect(result.text).toMatch(/^Moved (file|directory) |; nothing was moved\.$/)
    if (tool.name === 'create_directory') expect(result.text).toMatch(/^(Created directory |Directory .* already exists; nothing changed\.$)/s)
  }
  return result
}

describe('tool argument fuzz (memory backend behind a workspace-write sandbox)', () => {
  it('createFileTools returns at least list, read, write and edit', () => {
    expect(TOOL_NAMES).toEqual(expect.arrayContaining(['list', 'read', 'write', 'edit']))
  })

  describe.each(TOOL_NAMES)('%s', (name) => {
    it('always resolves on arbitrary values; nothing outside the workspace changes', async () => {
      const { fs, tools } = fixture()
      const tool = tools.find((t) => t.name === name) as FileTool
      const before = outside(fs)
      await fc.assert(
        fc.asyncProperty(fc.oneof(fc.anything(), fc.array(oddValue, { maxLength: 3 }), oddValue), async (args) => {
          await callChecked(tool, args, { session: 's' })
        }),
        { numRuns: RUNS },
      )
      expect(outside(fs)).toEqual(before)
    })

    it('always resolves on argument-shaped objects with odd values; nothing outside the workspace changes', async () => {
      const { fs, tools } = fixture()
      const byName = new Map(tools.map((t) => [t.name, t]))
      const tool = byName.get(name) as FileTool
      const before = outside(fs)
      const outcomes = { ok: 0, error: 0 }
      await fc.assert(
        fc.asyncProperty(argsFor(tool), fc.option(argsFor(byName.get('read') as FileTool)), async (args, readFirst) => {
          // sometimes read first, so writes and edits get past the policy and reach the store
          if (readFirst !== null) await callChecked(byName.get('read') as FileTool, readFirst, { session: 's' })
          const result = await callChecked(tool, args, { session: 's' })
          outcomes[result.isError ? 'error' : 'ok']++
        }),
        { numRuns: RUNS, examples: [[SURE_SUCCESS[name] ?? {}, { file_path: 'a.txt' }]] },
      )
      expect(outside(fs)).toEqual(before)
      expect(outcomes.error).toBeGreaterThan(0)
      // the generator reaches past validation and the policy into the store
      expect(outcomes.ok).toBeGreaterThan(0)
    })

    it('always resolves under odd contexts (cwd outside, odd sessions, an aborted signal)', async () => {
      const { fs, tools } = fixture()
      const tool = tools.find((t) => t.name === name) as FileTool
      const before = outside(fs)
      const aborted = AbortSignal.abort(new Error('stop'))
      const context = fc.record(
        {
          session: fc.oneof(fc.string(), fc.constant({}), fc.constant(undefined)),
          cwd: fc.oneof(fc.constantFrom('/w/out', '/', '/w', '/nope', WORKSPACE, `${WORKSPACE}/dir`, `${WORKSPACE}/out-link`), fc.constant(undefined)),
          signal: fc.constantFrom(undefined, aborted),
        },
        { requiredKeys: [] },
      )
      await fc.assert(
        fc.asyncProperty(argsFor(tool), context, async (args, ctx) => {
          const result = await callChecked(tool, args, ctx)
          if (ctx.signal === aborted) expect(result.isError).toBe(true)
        }),
        { numRuns: RUNS },
      )
      expect(outside(fs)).toEqual(before)
    })
  })

  it('a 10,000-segment path still resolves to an error result (the memory backend overflows its stack there)', async () => {
    const read = fixture().tools.find((t) => t.name === 'read') as FileTool
    const result = await read.execute({ file_path: 'a/'.repeat(10_000) }, { session: 's' })
    expect(result.isError).toBe(true)
    expect(result.text.startsWith('Error: ')).toBe(true)
  })

  it('the sandbox really is what keeps a write in: escapes are FS_SANDBOX_DENIED, in-workspace writes land', async () => {
    const { fs, tools } = fixture()
    const write = tools.find((t) => t.name === 'write') as FileTool
    for (const path of ['../out/new.txt', '/new-at-root.txt', 'out-link/new.txt', `${'../'.repeat(64)}top.txt`]) {
      const result = await callChecked(write, { file_path: path, content: 'x' }, { session: 's' })
      expect(result.code, path).toBe('FS_SANDBOX_DENIED')
    }
    expect(await callChecked(write, { file_path: 'dir/new.txt', content: 'x' }, { session: 's' })).toMatchObject({ isError: false })
    expect(fs.volume.readFileSync(`${WORKSPACE}/dir/new.txt`, 'utf8')).toBe('x')
  })
})

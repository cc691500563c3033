/**
 * `parseArgs` is the tools' own argument check, made public: for bad arguments it gives the very
 * result `execute` gives (schema rules and each tool's rules on its arguments alone), and for good
 * ones the typed arguments the tool runs with, defaults filled in.
 */
import { describe, expect, it } from 'vitest'
import { MemoryFileSystem } from '@seamfs/backend-memory'
import { createFileToolsByName, parseArgs, ToolInputError, type FileToolName, type FileToolsByName } from '@seamfs/tools'

const CONFIG = { readLimit: 50 }

function tools(): FileToolsByName {
  const fs = new MemoryFileSystem({ cwd: '/w', files: { 'a.txt': 'hello\nworld\n' } })
  return createFileToolsByName({ fs, config: CONFIG })
}

/** Bad calls of every tool: schema breaks, and the rules each tool adds on its arguments. */
const BAD: readonly (readonly [FileToolName, unknown])[] = [
  ['list', 'a.txt'],
  ['list', { path: '   ' }],
  ['list', { offset: 0, depth: 2 }],
  ['read', { filepath: 'a.txt' }],
  ['read', { file_path: 'a.txt', limit: 51 }],
  ['read', { file_path: 'a.txt', offset: 1.5, limit: 0 }],
  ['write', { file_path: 'a.txt' }],
  ['write', { file_path: 'a.txt', content: 'x', dryRun: 'yes' }],
  ['edit', { file_path: 'a.txt', old_string: 'same', new_string: 'same' }],
  ['edit', { file_path: 'a.txt', old_string: 'x', new_string: 'y', edits: [{ old_string: 'a', new_string: 'b' }] }],
  [
    'edit',
    {
      file_path: 'a.txt',
      edits: [
        { old_string: 'a', new_string: 'b' },
        { old_string: 'c', new_string: 'c' },
      ],
    },
  ],
  ['edit', { file_path: 'a.txt', edits: [{ old_string: '', new_string: 'b', extra: 1 }] }],
  ['edit', { file_path: 'a.txt', old_string: 'x' }],
  ['glob', { pattern: 'x'.repeat(70_000) }],
  ['grep', { pattern: '(' }],
  ['grep', { pattern: 'x', include: '*.ts,*.js' }],
  ['grep', { pattern: 'x', include: 'y'.repeat(70_000) }],
  ['list', { details: 'yes' }],
  ['read_files', { file_paths: [] }],
  ['read_files', { file_paths: ['a.txt', ''], limit: 51 }],
  ['tree', { depth: 21 }],
  ['info', {}],
  ['list_roots', { path: '.' }],
  ['create_directory', { path: 7 }],
  ['move', { source_path: 'a.txt' }],
  ['delete', {}],
]

describe('parseArgs', () => {
  const byName = tools()

  it.each(BAD)('refuses a bad %s call with the result the tool gives', async (name, args) => {
    const check = parseArgs(name, args, { config: CONFIG })
    expect(check.ok).toBe(false)
    if (check.ok) return
    const tool = byName[name]
    if (tool === undefined) throw new Error(`no ${name} tool`)
    const executed = await tool.execute(args)
    expect(executed.isError && executed.code === undefined).toBe(true)
    expect(check.result).toStrictEqual(executed)
    expect(check.error).toBeInstanceOf(ToolInputError)
    expect(`Error: ${check.error.message}`).toBe(executed.text)
  })

  it('names the argument as the tool does', () => {
    const check = parseArgs('read', { filepath: 'a.txt' })
    expect(check.ok ? undefined : check.result).toStrictEqual({
      text: 'Error: unknown argument "filepath" (allowed: file_path, offset, limit); file_path must be a non-empty string',
      isError: true,
    })
  })

  it('bounds by the config it is given, as the tool built with it', () => {
    expect(parseArgs('read', { file_path: 'a.txt', limit: 51 }).ok).toBe(true)
    const check = parseArgs('read', { file_path: 'a.txt', limit: 51 }, { config: CONFIG })
    expect(check.ok ? undefined : check.error.message).toBe('limit must be less than or equal to 50')
  })

  it('returns the checked arguments, defaults filled in and null as absent', () => {
    expect(parseArgs('read', { file_path: 'a.txt', offset: null })).toStrictEqual({ ok: true, args: { filePath: 'a.txt', offset: 1, limit: 2000 } })
    expect(parseArgs('list', {})).toStrictEqual({ ok: true, args: { path: '.', offset: 1, details: false } })
    expect(parseArgs('read_files', { file_paths: ['a.txt', 'b.txt'] })).toStrictEqual({ ok: true, args: { filePaths: ['a.txt', 'b.txt'], limit: 2000 } })
    expect(parseArgs('tree', { depth: null })).toStrictEqual({ ok: true, args: { path: '.', depth: 3 } })
    expect(parseArgs('info', { path: 'a.txt' })).toStrictEqual({ ok: true, args: { path: 'a.txt' } })
    expect(parseArgs('list_roots', {})).toStrictEqual({ ok: true, args: {} })
    expect(parseArgs('edit', { file_path: 'a.txt', old_string: 'a', new_string: 'b' })).toStrictEqual({
      ok: true,
      args: { filePath: 'a.txt', edits: [{ oldString: 'a', newString: 'b', replaceAll: false }], asList: false, dryRun: false },
    })
    expect(parseArgs('grep', { pattern: '\\p{L}', include: null })).toStrictEqual({
      ok: true,
      args: { pattern: '\\p{L}', flags: 'u', path: '.', include: undefined, includeIgnored: false },
    })
    expect(parseArgs('glob', { pattern: '*.ts', include_ignored: true })).toStrictEqual({
      ok: true,
      args: { pattern: '*.ts', path: '.', includeIgnored: true },
    })
  })

  it('throws for a name no tool has', () => {
    expect(() => parseArgs('cat', {})).toThrow(TypeError)
  })
})

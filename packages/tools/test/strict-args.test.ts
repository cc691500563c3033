/**
 * `execute` accepts exactly what each tool's `inputSchema` declares. The cases
 * are derived from the schema itself (every property with values of every
 * type, each required key missing or null, each optional key null, the bounds
 * of every integer and string, unknown keys, non-object arguments) and judged
 * by a real JSON Schema validator (ajv, as the MCP SDK's hosts use it), so the
 * schema a host validates with and the checks `execute` makes cannot drift.
 */
import { AjvJsonSchemaValidator } from '@modelcontextprotocol/sdk/validation/ajv'
import { describe, expect, it } from 'vitest'
import { MemoryFileSystem } from '@seamfs/backend-memory'
import { createFileTools, ObservationPolicy, type FileTool, type ToolResult } from '@seamfs/tools'
import { argsParser } from '../src/args.js'

interface Property {
  readonly type: string | readonly string[]
  readonly minimum?: number
  readonly maximum?: number
  readonly minLength?: number
  readonly pattern?: string
  readonly items?: { readonly type?: string }
}

const validator = new AjvJsonSchemaValidator()

function tools(): FileTool[] {
  const fs = new MemoryFileSystem({ cwd: '/w', files: { 'a.txt': 'hello\nworld\n', 'dir/b.txt': 'b\n' } })
  return createFileTools({ fs, policy: new ObservationPolicy(), config: { readLimit: 50 } })
}

const TOOLS = tools()

const propertiesOf = (tool: FileTool): Record<string, Property> => tool.inputSchema['properties'] as Record<string, Property>
const requiredOf = (tool: FileTool): string[] => (tool.inputSchema['required'] ?? []) as string[]
const baseType = (p: Property): string => (Array.isArray(p.type) ? (p.type[0] as string) : (p.type as string))

/** A value the property accepts, chosen so calls reach the store. */
function validValue(name: string, p: Property): unknown {
  const type = baseType(p)
  if (type === 'integer') return p.minimum ?? 1
  if (type === 'boolean') return false
  if (type === 'array') return p.items?.type === 'string' ? ['a.txt'] : []
  if (name.includes('path')) return 'a.txt'
  if (name === 'pattern') return 'a*'
  return name === 'new_string' ? 'HELLO' : 'hello'
}

function baseArgs(tool: FileTool): Record<string, unknown> {
  const props = propertiesOf(tool)
  return Object.fromEntries(requiredOf(tool).map((k) => [k, validValue(k, props[k] as Property)]))
}

/** A value of every JSON type, and the odd numbers and strings around the tools' rules. */
const POOL: readonly unknown[] = [null, true, false, 0, -0, 1, 2, -1, 1.5, 1.0, 2 ** 53, 1e300, '', ' ', '\t\n', 'x', ' a ', '7', [], ['a.txt'], {}, { a: 1 }]

/** The bounds a property declares, each side of every edge. */
function boundaryValues(p: Property): unknown[] {
  const out: unknown[] = []
  for (const edge of [p.minimum, p.maximum]) if (edge !== undefined) out.push(edge - 1, edge - 0.5, edge, edge + 0.5, edge + 1)
  if (p.minLength !== undefined) out.push('a'.repeat(Math.max(0, p.minLength - 1)), 'a'.repeat(p.minLength), '\u{1F600}'.repeat(p.minLength))
  if (p.pattern !== undefined) out.push('\u00a0', '\u2028', '\ufeff', 'a', '\ta')
  return out
}

interface Case {
  readonly label: string
  readonly args: unknown
  /** Keys a refusal must name. */
  readonly names: readonly string[]
}

function casesFor(tool: FileTool): Case[] {
  const props = propertiesOf(tool)
  const base = baseArgs(tool)
  const cases: Case[] = [{ label: 'the required keys', args: base, names: [] }]
  for (const [name, p] of Object.entries(props)) {
    for (const value of [...POOL, ...boundaryValues(p), validValue(name, p)]) {
      cases.push({ label: `${name}: ${JSON.stringify(value)}`, args: { ...base, [name]: value }, names: [name] })
    }
  }
  for (const name of requiredOf(tool)) {
    const { [name]: _dropped, ...rest } = base
    cases.push({ label: `without ${name}`, args: rest, names: [name] })
  }
  cases.push({ label: 'an unknown key', args: { ...base, bogus: 1 }, names: ['bogus'] })
  cases.push({ label: 'an unknown key set to null', args: { ...base, bogus: null }, names: ['bogus'] })
  cases.push({ label: 'a misspelt key', args: { ...base, filepath: 'a.txt', Path: '.' }, names: ['filepath', 'Path'] })
  cases.push({ label: 'a key inherited from Object', args: JSON.parse('{"__proto__": {"x": 1}}') as unknown, names: ['__proto__'] })
  for (const args of [null, [], 'a.txt', 7, true]) cases.push({ label: `arguments ${JSON.stringify(args)}`, args, names: [] })
  return cases
}

/** An input error from the schema's rules (not a semantic one like an invalid regular expression). */
function schemaRefusal(result: ToolResult): boolean {
  return (
    result.isError &&
    result.code === undefined &&
    /^Error: (arguments must be an object|unknown arguments? |[A-Za-z_]+(\[\d+\](\.[a-z_]+)?)? must be )/.test(result.text)
  )
}

describe.each(TOOLS.map((t) => [t.name, t] as const))('%s: execute agrees with its inputSchema', (_name, tool) => {
  const check = validator.getValidator(tool.inputSchema)
  const allowed = Object.keys(propertiesOf(tool))

  it('the schema is strict: an object, additionalProperties false, optional keys nullable, required keys not', () => {
    expect(tool.inputSchema).toMatchObject({ type: 'object', additionalProperties: false })
    for (const [name, p] of Object.entries(propertiesOf(tool))) {
      const nullable = Array.isArray(p.type) && p.type.includes('null')
      expect(nullable, name).toBe(!requiredOf(tool).includes(name))
    }
  })

  it.each(casesFor(tool).map((c) => [c.label, c] as const))('%s', async (_label, c) => {
    const verdict = check(c.args)
    const result = await tool.execute(c.args)
    expect(schemaRefusal(result), `ajv: ${verdict.errorMessage ?? 'valid'}; execute: ${result.text}`).toBe(!verdict.valid)
    if (verdict.valid) return
    for (const name of c.names) expect(result.text).toContain(name)
    if (/unknown argument/.test(result.text)) expect(result.text).toContain(`(allowed: ${allowed.length === 0 ? 'none' : allowed.join(', ')})`)
  })
})

describe('the argument rules', () => {
  // Tools of their own: the cases above ran delete and move on the shared ones.
  const fresh = tools()
  const read = fresh.find((t) => t.name === 'read') as FileTool
  const write = fresh.find((t) => t.name === 'write') as FileTool

  it('names every unknown key, then every broken rule, in one message', async () => {
    const result = await write.execute({ path: 'a.txt', text: 'x', content: 3 })
    expect(result).toEqual({
      isError: true,
      text: 'Error: unknown arguments "path", "text" (allowed: file_path, content, dryRun); file_path must be a non-empty string; content must be a string',
    })
  })

  it('null on an optional key means absent; undefined anywhere means absent', async () => {
    const nulls = await read.execute({ file_path: 'a.txt', offset: null, limit: null })
    const undefs = await read.execute({ file_path: 'a.txt', offset: undefined, stray: undefined })
    expect(nulls.isError).toBe(false)
    expect(undefs.text).toBe(nulls.text)
    expect((await fresh[0]!.execute(undefined)).isError).toBe(false)
  })

  it('any JSON integer within bounds is taken: an offset of 2^53 is out of range, not malformed', async () => {
    const result = await read.execute({ file_path: 'a.txt', offset: 2 ** 53 })
    expect(result.code).toBe('FS_NOT_FOUND')
    expect(result.text).toMatch(/^Error: offset 9007199254740992 is out of range/)
  })

  it('a long unknown key is cut, and past five only counted', async () => {
    const args: Record<string, unknown> = { file_path: 'a.txt', ['k'.repeat(100)]: 1 }
    for (let i = 0; i < 6; i++) args[`extra${i}`] = i
    const result = await read.execute(args)
    expect(result.text).toBe(
      `Error: unknown arguments "${'k'.repeat(37)}...", "extra0", "extra1", "extra2", "extra3" and 2 more (allowed: file_path, offset, limit)`,
    )
  })

  it('refuses, when a tool is built, a schema using a rule it would not enforce', () => {
    const object = (properties: Record<string, unknown>, required: string[] = []) => ({ type: 'object', properties, required, additionalProperties: false })
    expect(() => argsParser(object({ mode: { type: 'string', enum: ['a'] } }, ['mode']))).toThrow(/keyword mode\.enum/)
    expect(() => argsParser(object({ n: { type: 'integer' } }))).toThrow(/optional property must be/)
    expect(() => argsParser(object({ n: { type: ['integer', 'null'] } }, ['n']))).toThrow(/optional property must be/)
    expect(() => argsParser(object({ n: { type: 'number' } }, ['n']))).toThrow(/type of n/)
    expect(() => argsParser({ type: 'object', properties: {} })).toThrow(/additionalProperties/)
    expect(() => argsParser(object({}, ['ghost']))).toThrow(/required key ghost/)
    expect(() => argsParser(object({ list: { type: ['array', 'null'] } }))).toThrow(/array needs items/)
    expect(() => argsParser(object({ s: { type: 'string', items: object({}) } }, ['s']))).toThrow(/array needs items/)
    const inner = object({ deeper: { type: ['array', 'null'], items: object({}) } })
    expect(() => argsParser(object({ list: { type: ['array', 'null'], items: inner } }))).toThrow(/array inside an array item/)
  })
})

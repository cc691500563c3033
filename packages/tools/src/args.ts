import { ToolInputError } from './results.js'
import type { JsonSchema } from './types.js'

type Scalar = string | number | boolean

/** The `pattern` of a string that must hold a non-whitespace character (what `value.trim() !== ''` tests). */
export const NON_BLANK = '\\S'

/** One declared property, read from the schema. */
interface Rule {
  readonly name: string
  readonly type: 'string' | 'integer' | 'boolean'
  readonly required: boolean
  readonly minimum: number | undefined
  readonly maximum: number | undefined
  readonly minLength: number | undefined
  readonly pattern: RegExp | undefined
}

/** The keywords a property may use; anything else is refused when the tool is built, so `execute` never ignores a rule the schema states. */
const KEYWORDS = new Set(['type', 'description', 'minimum', 'maximum', 'minLength', 'pattern'])
const TYPES = new Set(['string', 'integer', 'boolean'])
const MAX_NAMED = 5

function unsupported(what: string): never {
  throw new TypeError(`tools: inputSchema ${what} is not supported by the argument checker`)
}

function optionalNumber(property: Readonly<Record<string, unknown>>, key: string, name: string): number | undefined {
  const value = property[key]
  if (value !== undefined && typeof value !== 'number') unsupported(`${name}.${key} (not a number)`)
  return value
}

/** A property's rule. A required property has one type; an optional one is `[type, 'null']`: null means absent. */
function ruleOf(name: string, property: Readonly<Record<string, unknown>>, required: boolean): Rule {
  for (const key of Object.keys(property)) if (!KEYWORDS.has(key)) unsupported(`keyword ${name}.${key}`)
  const declared = property['type']
  const nullable = Array.isArray(declared) && declared.length === 2 && declared[1] === 'null'
  const type: unknown = nullable ? declared[0] : declared
  if (typeof type !== 'string' || !TYPES.has(type)) unsupported(`type of ${name}`)
  if (nullable === required) unsupported(`${name}: an optional property must be [type, 'null'], a required one a single type`)
  const pattern = property['pattern']
  if (pattern !== undefined && typeof pattern !== 'string') unsupported(`${name}.pattern (not a string)`)
  return {
    name,
    type: type as Rule['type'],
    required,
    minimum: optionalNumber(property, 'minimum', name),
    maximum: optionalNumber(property, 'maximum', name),
    minLength: optionalNumber(property, 'minLength', name),
    pattern: pattern === undefined ? undefined : new RegExp(pattern, 'u'),
  }
}

/** What `rule` accepts, in words, as the model reads it after `<name> must be`. */
function expected(rule: Rule): string {
  const when = rule.required ? '' : ' when given'
  if (rule.type === 'boolean') return 'a boolean'
  if (rule.type === 'integer') return rule.minimum === 1 ? 'a positive integer' : 'an integer'
  if (rule.pattern !== undefined || (rule.minLength ?? 0) > 0) return `a non-empty string${when}`
  return 'a string'
}

/** Why `value` breaks `rule`, or undefined when it keeps it. */
function problem(rule: Rule, value: unknown): string | undefined {
  const wrong = `${rule.name} must be ${expected(rule)}`
  if (rule.type === 'boolean') return typeof value === 'boolean' ? undefined : wrong
  if (rule.type === 'integer') {
    if (typeof value !== 'number' || !Number.isInteger(value)) return wrong
    if (rule.minimum !== undefined && value < rule.minimum) return rule.minimum === 1 ? wrong : `${rule.name} must be greater than or equal to ${rule.minimum}`
    if (rule.maximum !== undefined && value > rule.maximum) return `${rule.name} must be less than or equal to ${rule.maximum}`
    return undefined
  }
  if (typeof value !== 'string') return wrong
  if (rule.minLength !== undefined && [...value].length < rule.minLength) return wrong
  if (rule.pattern !== undefined && !rule.pattern.test(value)) return wrong
  return undefined
}

function unknownKeys(keys: readonly string[], rules: readonly Rule[]): string {
  const shown = keys.slice(0, MAX_NAMED).map((k) => JSON.stringify(k.length > 40 ? `${k.slice(0, 37)}...` : k))
  const more = keys.length > MAX_NAMED ? ` and ${keys.length - MAX_NAMED} more` : ''
  const allowed = rules.length === 0 ? 'none' : rules.map((r) => r.name).join(', ')
  return `unknown argument${keys.length === 1 ? '' : 's'} ${shown.join(', ')}${more} (allowed: ${allowed})`
}

/** The checked arguments of one call: the declared values, `null` and `undefined` read as absent. */
export class ToolArgs {
  readonly #values: ReadonlyMap<string, Scalar>

  constructor(values: ReadonlyMap<string, Scalar>) {
    this.#values = values
  }

  /** A value `ParseArgs` checked as a `type`; asking for anything else is a bug in the tool (an internal error), never the model's. */
  #get(name: string, type: 'string' | 'number' | 'boolean'): Scalar | undefined {
    const value = this.#values.get(name)
    if (value !== undefined && typeof value !== type) throw new Error(`tools: argument ${name} is not a declared ${type}`)
    return value
  }

  string(name: string): string {
    const value = this.#get(name, 'string')
    if (value === undefined) throw new Error(`tools: argument ${name} is not a declared required string`)
    return value as string
  }

  optionalString(name: string): string | undefined {
    return this.#get(name, 'string') as string | undefined
  }

  integer(name: string, fallback: number): number {
    return (this.#get(name, 'number') as number | undefined) ?? fallback
  }

  boolean(name: string, fallback: boolean): boolean {
    return (this.#get(name, 'boolean') as boolean | undefined) ?? fallback
  }
}

/** Checks one call's arguments; throws a {@link ToolInputError} naming every broken rule. */
export type ParseArgs = (args: unknown) => ToolArgs

/**
 * The checker of a tool's own `inputSchema`, so `execute` accepts exactly what
 * the schema declares: an object (`undefined`, which JSON cannot carry, is
 * `{}`), no key outside `properties` (`additionalProperties: false`), every
 * `required` key, each value of its type within `minimum`/`maximum`/
 * `minLength`/`pattern`; an optional key may be `null` (its type is
 * `[type, 'null']`), which means absent. A key whose value is `undefined` is
 * absent too. A schema using anything else throws a `TypeError` here, when the
 * tool is built.
 */
export function argsParser(schema: JsonSchema): ParseArgs {
  if (schema['type'] !== 'object' || schema['additionalProperties'] !== false) unsupported('other than an object with additionalProperties: false')
  const properties = (schema['properties'] ?? {}) as Readonly<Record<string, Readonly<Record<string, unknown>>>>
  const required = new Set((schema['required'] ?? []) as readonly string[])
  for (const name of required) if (!Object.hasOwn(properties, name)) unsupported(`required key ${name} (not a property)`)
  const rules = Object.entries(properties).map(([name, property]) => ruleOf(name, property, required.has(name)))
  const declared = new Set(rules.map((r) => r.name))
  return (args) => {
    const given = args === undefined ? {} : args
    if (typeof given !== 'object' || given === null || Array.isArray(given)) throw new ToolInputError('arguments must be an object')
    const record = given as Readonly<Record<string, unknown>>
    const problems: string[] = []
    const stray = Object.keys(record).filter((k) => !declared.has(k) && record[k] !== undefined)
    if (stray.length > 0) problems.push(unknownKeys(stray, rules))
    const values = new Map<string, Scalar>()
    for (const rule of rules) {
      const value = Object.hasOwn(record, rule.name) ? record[rule.name] : undefined
      if ((value === undefined || value === null) && !rule.required) continue
      const wrong = problem(rule, value)
      if (wrong === undefined) values.set(rule.name, value as Scalar)
      else problems.push(wrong)
    }
    if (problems.length > 0) throw new ToolInputError(problems.join('; '))
    return new ToolArgs(values)
  }
}

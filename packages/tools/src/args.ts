import { ToolInputError } from './results.js'
import type { JsonSchema } from './types.js'

type Scalar = string | number | boolean
/** A checked value: a scalar, a list of checked objects, or a list of strings. */
type Value = Scalar | readonly ToolArgs[] | readonly string[]

/** The `pattern` of a string that must hold a non-whitespace character (what `value.trim() !== ''` tests). */
export const NON_BLANK = '\\S'

/** One declared property, read from the schema. */
interface Rule {
  readonly name: string
  readonly type: 'string' | 'integer' | 'boolean' | 'array'
  readonly required: boolean
  readonly minimum: number | undefined
  readonly maximum: number | undefined
  readonly minLength: number | undefined
  readonly pattern: RegExp | undefined
  readonly minItems: number | undefined
  readonly maxItems: number | undefined
  /**
   * The checker of each item of an array: its `items`, an object schema of scalar properties, or a
   * string schema (the rule of each string, named by its place).
   */
  readonly items: Check | Rule | undefined
}

/** The keywords a property may use; anything else is refused when the tool is built, so `execute` never ignores a rule the schema states. */
const KEYWORDS = new Set(['type', 'description', 'minimum', 'maximum', 'minLength', 'pattern', 'items', 'minItems', 'maxItems'])
const TYPES = new Set(['string', 'integer', 'boolean', 'array'])
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
  const items = property['items']
  if ((type === 'array') !== (items !== undefined)) unsupported(`${name}: an array needs items, and only an array has them`)
  return {
    name,
    type: type as Rule['type'],
    required,
    minimum: optionalNumber(property, 'minimum', name),
    maximum: optionalNumber(property, 'maximum', name),
    minLength: optionalNumber(property, 'minLength', name),
    pattern: pattern === undefined ? undefined : new RegExp(pattern, 'u'),
    minItems: optionalNumber(property, 'minItems', name),
    maxItems: optionalNumber(property, 'maxItems', name),
    items: items === undefined ? undefined : itemsOf(name, items as JsonSchema),
  }
}

/** An array's `items`: an object schema (checked as nested arguments), or a string schema (each item a string rule). */
function itemsOf(name: string, items: JsonSchema): Check | Rule {
  if (items['type'] === 'object') return checker(items, true)
  if (items['type'] !== 'string') unsupported(`${name}.items (neither an object nor a string)`)
  return ruleOf(`${name}[]`, items, true)
}

/** What `rule` accepts, in words, as the model reads it after `<name> must be`. */
function expected(rule: Rule): string {
  const when = rule.required ? '' : ' when given'
  if (rule.type === 'boolean') return 'a boolean'
  if (rule.type === 'array') {
    const most = rule.maxItems === undefined ? ' of' : ` of at most ${rule.maxItems}`
    const what = typeof rule.items === 'function' ? 'objects' : 'strings'
    return `a ${(rule.minItems ?? 0) > 0 ? 'non-empty ' : ''}list${most} ${what}${when}`
  }
  if (rule.type === 'integer') return rule.minimum === 1 ? 'a positive integer' : 'an integer'
  if (rule.pattern !== undefined || (rule.minLength ?? 0) > 0) return `a non-empty string${when}`
  return 'a string'
}

/** The message of a broken `rule`, built only when one is: a call that keeps them all allocates none. */
function wrong(rule: Rule, shown: string): string {
  return `${shown} must be ${expected(rule)}`
}

/** Why the scalar `value` breaks `rule`, or undefined when it keeps it; `shown` is the rule's name as the message gives it. */
function problem(rule: Rule, value: unknown, shown: string): string | undefined {
  if (rule.type === 'boolean') return typeof value === 'boolean' ? undefined : wrong(rule, shown)
  if (rule.type === 'array') {
    if (!Array.isArray(value)) return wrong(rule, shown)
    if ((rule.minItems !== undefined && value.length < rule.minItems) || (rule.maxItems !== undefined && value.length > rule.maxItems))
      return wrong(rule, shown)
    return undefined
  }
  if (rule.type === 'integer') {
    if (typeof value !== 'number' || !Number.isInteger(value)) return wrong(rule, shown)
    if (rule.minimum !== undefined && value < rule.minimum)
      return rule.minimum === 1 ? wrong(rule, shown) : `${shown} must be greater than or equal to ${rule.minimum}`
    if (rule.maximum !== undefined && value > rule.maximum) return `${shown} must be less than or equal to ${rule.maximum}`
    return undefined
  }
  if (typeof value !== 'string') return wrong(rule, shown)
  if (rule.minLength !== undefined && codePointsBelow(value, rule.minLength)) return wrong(rule, shown)
  if (rule.pattern !== undefined && !rule.pattern.test(value)) return wrong(rule, shown)
  return undefined
}

/** Whether `text` has fewer than `least` code points, counted no further than needed (a long string is not spread). */
function codePointsBelow(text: string, least: number): boolean {
  if (text.length >= 2 * least) return false
  let count = 0
  for (const _ of text) if (++count >= least) return false
  return true
}

function unknownKeys(keys: readonly string[], rules: readonly Rule[], at: string): string {
  const shown = keys.slice(0, MAX_NAMED).map((k) => JSON.stringify(k.length > 40 ? `${k.slice(0, 37)}...` : k))
  const more = keys.length > MAX_NAMED ? ` and ${keys.length - MAX_NAMED} more` : ''
  const allowed = rules.length === 0 ? 'none' : rules.map((r) => r.name).join(', ')
  return `${at === '' ? '' : `${at}: `}unknown argument${keys.length === 1 ? '' : 's'} ${shown.join(', ')}${more} (allowed: ${allowed})`
}

/** The checked arguments of one call: the declared values, `null` and `undefined` read as absent. */
export class ToolArgs {
  /** Each declared property's place in `values`: one map per schema, not per call. */
  readonly #places: ReadonlyMap<string, number>
  /** The values in the schema's order, `undefined` where absent. */
  readonly #values: readonly (Value | undefined)[]

  constructor(places: ReadonlyMap<string, number>, values: readonly (Value | undefined)[]) {
    this.#places = places
    this.#values = values
  }

  #value(name: string): Value | undefined {
    const place = this.#places.get(name)
    return place === undefined ? undefined : this.#values[place]
  }

  /** A value `ParseArgs` checked as a `type`; asking for anything else is a bug in the tool (an internal error), never the model's. */
  #get(name: string, type: 'string' | 'number' | 'boolean'): Scalar | undefined {
    const value = this.#value(name)
    if (value !== undefined && typeof value !== type) throw new Error(`tools: argument ${name} is not a declared ${type}`)
    return value as Scalar | undefined
  }

  /** Whether the call gave `name` (neither absent nor null). */
  has(name: string): boolean {
    return this.#value(name) !== undefined
  }

  /** The checked items of an optional array of objects, or undefined when absent. */
  optionalList(name: string): readonly ToolArgs[] | undefined {
    const value = this.#value(name)
    if (value !== undefined && !Array.isArray(value)) throw new Error(`tools: argument ${name} is not a declared array`)
    return value as readonly ToolArgs[] | undefined
  }

  /** The checked items of a required array of strings. */
  strings(name: string): readonly string[] {
    const value = this.#value(name)
    if (!Array.isArray(value) || value.some((item) => typeof item !== 'string'))
      throw new Error(`tools: argument ${name} is not a declared required array of strings`)
    return value as readonly string[]
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

/** Checks one object (`at`: where it sits, `''` for the arguments themselves); returns its values or the broken rules. */
type Check = (given: unknown, at: string) => ToolArgs | string[]

function checker(schema: JsonSchema, nested: boolean): Check {
  if (schema['type'] !== 'object' || schema['additionalProperties'] !== false) unsupported('other than an object with additionalProperties: false')
  const properties = (schema['properties'] ?? {}) as Readonly<Record<string, Readonly<Record<string, unknown>>>>
  const required = new Set((schema['required'] ?? []) as readonly string[])
  for (const name of required) if (!Object.hasOwn(properties, name)) unsupported(`required key ${name} (not a property)`)
  const rules = Object.entries(properties).map(([name, property]) => ruleOf(name, property, required.has(name)))
  if (nested && rules.some((r) => r.type === 'array')) unsupported('array inside an array item')
  const places: ReadonlyMap<string, number> = new Map(rules.map((r, i) => [r.name, i]))
  return (given, at) => {
    if (typeof given !== 'object' || given === null || Array.isArray(given)) return [at === '' ? 'arguments must be an object' : `${at} must be an object`]
    const record = given as Readonly<Record<string, unknown>>
    // Built only for a call that breaks a rule: one that keeps them all allocates its values and no more.
    let problems: string[] | undefined
    let stray: string[] | undefined
    for (const key in record) if (Object.hasOwn(record, key) && !places.has(key) && record[key] !== undefined) (stray ??= []).push(key)
    if (stray !== undefined) (problems ??= []).push(unknownKeys(stray, rules, at))
    const values = new Array<Value | undefined>(rules.length).fill(undefined)
    for (let place = 0; place < rules.length; place++) {
      const rule = rules[place] as Rule
      const value = Object.hasOwn(record, rule.name) ? record[rule.name] : undefined
      if ((value === undefined || value === null) && !rule.required) continue
      const shown = at === '' ? rule.name : `${at}.${rule.name}`
      const wrong = problem(rule, value, shown)
      if (wrong !== undefined) (problems ??= []).push(wrong)
      else if (rule.items === undefined) values[place] = value as Scalar
      else if (typeof rule.items !== 'function') {
        const itemRule = rule.items
        const broken = (value as unknown[]).flatMap((item, i) => problem(itemRule, item, `${shown}[${i}]`) ?? [])
        if (broken.length > 0) (problems ??= []).push(...broken)
        else values[place] = value as string[]
      } else {
        const items = (value as unknown[]).map((item, i) => (rule.items as Check)(item, `${shown}[${i}]`))
        const broken = items.flatMap((item) => (item instanceof ToolArgs ? [] : item))
        if (broken.length > 0) (problems ??= []).push(...broken)
        else values[place] = items as ToolArgs[]
      }
    }
    return problems !== undefined ? problems : new ToolArgs(places, values)
  }
}

/**
 * The checker of a tool's own `inputSchema`, so `execute` accepts exactly what
 * the schema declares: an object (`undefined`, which JSON cannot carry, is
 * `{}`), no key outside `properties` (`additionalProperties: false`), every
 * `required` key, each value of its type within `minimum`/`maximum`/
 * `minLength`/`pattern`; an optional key may be `null` (its type is
 * `[type, 'null']`), which means absent. A key whose value is `undefined` is
 * absent too. An `array` property (`minItems`/`maxItems`) holds objects whose
 * `items` schema follows the same rules, one level deep, or strings whose
 * `items` schema is a string rule; a broken item rule is named by its place
 * (`edits[1].old_string must be …`, `file_paths[0] must be …`). A schema using anything
 * else throws a `TypeError` here, when the tool is built.
 */
export function argsParser(schema: JsonSchema): ParseArgs {
  const check = checker(schema, false)
  return (args) => {
    const checked = check(args === undefined ? {} : args, '')
    if (!(checked instanceof ToolArgs)) throw new ToolInputError(checked.join('; '))
    return checked
  }
}

/**
 * The building blocks of each tool's structured output (a JSON Schema and the plain object it
 * describes, built from the tool's canonical value): every member is required and nothing else
 * is allowed, so the schema says exactly what `content` returns. Whole files never appear:
 * `write` and `edit` keep the diff and drop `before`/`after`.
 */
import type { JsonSchema } from './types.js'

export const STRING = { type: 'string' } as const
export const COUNT = { type: 'integer', minimum: 0 } as const
export const LINE_NUMBER = { type: 'integer', minimum: 1 } as const
export const BOOLEAN = { type: 'boolean' } as const
export const NULLABLE_STRING = { type: ['string', 'null'] } as const
export const FILE_OR_DIRECTORY = { type: 'string', enum: ['file', 'directory'] } as const

/** An object schema whose keys are all required (but `optional` ones) and no others allowed. */
export function object(properties: Record<string, JsonSchema>, optional: readonly string[] = []): JsonSchema {
  return { type: 'object', properties, required: Object.keys(properties).filter((k) => !optional.includes(k)), additionalProperties: false }
}

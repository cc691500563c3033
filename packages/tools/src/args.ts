import { ToolInputError } from './results.js'

/** The arguments object, or an input error (never a throw of anything else). */
export function argsObject(args: unknown): Record<string, unknown> {
  if (typeof args !== 'object' || args === null || Array.isArray(args)) {
    throw new ToolInputError('arguments must be an object')
  }
  return args as Record<string, unknown>
}

export function requiredPath(args: Record<string, unknown>, name: string): string {
  const value = args[name]
  if (typeof value !== 'string' || value.trim() === '') throw new ToolInputError(`${name} must be a non-empty string`)
  return value
}

export function optionalPath(args: Record<string, unknown>, name: string): string | undefined {
  const value = args[name]
  if (value === undefined || value === null) return undefined
  if (typeof value !== 'string' || value.trim() === '') throw new ToolInputError(`${name} must be a non-empty string when given`)
  return value
}

export function positiveInteger(args: Record<string, unknown>, name: string, fallback: number, max?: number): number {
  const value = args[name]
  if (value === undefined || value === null) return fallback
  if (typeof value !== 'number' || !Number.isSafeInteger(value) || value < 1) {
    throw new ToolInputError(`${name} must be a positive integer`)
  }
  if (max !== undefined && value > max) throw new ToolInputError(`${name} must be less than or equal to ${max}`)
  return value
}

export function requiredString(args: Record<string, unknown>, name: string): string {
  const value = args[name]
  if (typeof value !== 'string') throw new ToolInputError(`${name} must be a string`)
  return value
}

export function optionalBoolean(args: Record<string, unknown>, name: string): boolean {
  const value = args[name]
  if (value === undefined || value === null) return false
  if (typeof value !== 'boolean') throw new ToolInputError(`${name} must be a boolean`)
  return value
}

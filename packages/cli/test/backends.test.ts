/**
 * The CLI's map of backends: every entry loads its package's definition, the
 * definition agrees with the map, and a backend package that is not installed
 * is a ConfigError that says what to install; the README shows what each
 * package defines. No server is needed: a
 * definition's `./config` entry never loads its SDK.
 */
import { readFileSync } from 'node:fs'
import { fileURLToPath } from 'node:url'
import { describe, expect, it } from 'vitest'
import type { ConfigField } from '@seamfs/core/backend'
import { ConfigError, isConfigError, parseFsUrl } from '@seamfs/cli'
import { BACKENDS, backendDefinition, importDefinition } from '../src/backends.js'

async function rejection(promise: Promise<unknown>): Promise<ConfigError> {
  const err: unknown = await promise.then(
    () => new Error('expected a ConfigError'),
    (e: unknown) => e,
  )
  expect(err).toBeInstanceOf(ConfigError)
  expect(isConfigError(err)).toBe(true)
  return err as ConfigError
}

describe('BACKENDS: each type is defined by its package', () => {
  it.each(Object.keys(BACKENDS))('%s', async (type) => {
    const definition = await backendDefinition(type, 'backend.type')
    expect(definition.type).toBe(type)
    expect(definition.url.startsWith(BACKENDS[type]?.scheme ?? '?')).toBe(true)
    expect(definition.fields.length).toBeGreaterThan(0)
    // The unknown-key message lists exactly the definition's fields.
    const err = await rejection(Promise.resolve().then(() => definition.parseConfig({ type, colour: 'red' }, 'backend')))
    expect(err.message).toBe(
      `config: backend.colour: expected one of the keys ${['type', ...definition.fields.map((f) => f.name)].join(', ')}, found an unknown key`,
    )
  })

  it('the map names the four backends in the order messages list them', () => {
    expect(Object.keys(BACKENDS)).toEqual(['local', 'memory', 's3', 'sftp'])
  })
})

describe('the serving line of an SFTP backend', () => {
  it('writes a relative root under /~/ (the login directory), an absolute one as it is, and reads the first back', async () => {
    const definition = await backendDefinition('sftp', 'backend.type')
    const describeSftp = (root?: string): string =>
      definition.describe(definition.parseConfig({ type: 'sftp', host: 'h', username: 'u', ...(root === undefined ? {} : { root }) }, 'backend'))
    expect([describeSftp('data/x'), describeSftp('/srv/x'), describeSftp()]).toEqual(['sftp://u@h/~/data/x', 'sftp://u@h/srv/x', 'sftp://u@h'])
    expect(await parseFsUrl(describeSftp('data/x'))).toEqual({ type: 'sftp', host: 'h', username: 'u', root: 'data/x' })
  })
})

describe('a backend package that is not installed', () => {
  it('is a ConfigError naming the package to install', async () => {
    const err = await rejection(importDefinition('@seamfs/backend-nope', 'nopeBackend', 'backend.type'))
    expect(err.key).toBe('backend.type')
    expect(err.message).toBe('config: backend.type: expected the package @seamfs/backend-nope (npm install @seamfs/backend-nope), found it is not installed')
  })

  it('a package without the definition is a ConfigError too', async () => {
    const err = await rejection(importDefinition('@seamfs/backend-memory', 'nopeBackend', '--fs'))
    expect(err.message).toBe('config: --fs: expected a package @seamfs/backend-memory whose ./config exports nopeBackend, found none')
  })
})

describe('--fs forms read by the backend packages', () => {
  it('memory: takes nothing after the colon', async () => {
    const err = await rejection(parseFsUrl('memory:x'))
    expect(err.message).toBe('config: --fs: expected memory:, found the string "memory:x"')
  })

  it('an empty --fs is refused, not taken as the current directory', async () => {
    const err = await rejection(parseFsUrl(''))
    expect(err.message).toBe('config: --fs: expected file:, memory:, s3:// or sftp://, found the string ""')
  })
})

describe('the README documents every backend as its package defines it', () => {
  // Table cells are compared with their padding collapsed: a formatter may align the columns.
  const readme = readFileSync(fileURLToPath(new URL('../README.md', import.meta.url)), 'utf8').replaceAll(/ {2,}\|/g, ' |')
  const kind = (f: ConfigField): string =>
    f.kind === 'string'
      ? f.allowEmpty === true
        ? 'string, may be empty'
        : 'string'
      : f.kind === 'port'
        ? 'port (integer 1–65535)'
        : f.kind === 'mode'
          ? 'mode (octal string, e.g. `"0600"`)'
          : f.kind

  it.each(Object.keys(BACKENDS))('%s', async (type) => {
    const definition = await backendDefinition(type, 'backend.type')
    expect(readme).toContain(`#### \`${type}\` — \`${BACKENDS[type]?.package ?? '?'}\``)
    expect(readme).toContain(`\`--fs\` form: \`${definition.url}\``)
    for (const f of definition.fields) expect(readme).toContain(`| \`${f.name}\` | ${kind(f)} | ${f.required === true ? 'yes' : 'no'} | ${f.doc} |`)
  })
})

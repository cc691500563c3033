import { expect } from 'vitest'
import { FsVersion, type FsError, type FsErrorCode, type FsTarget, type FsVerb } from '@seamfs/core/backend'
import { codeOf, type Env, type Kit, type Needs } from '../kit.js'
import { streamChunks } from './stream.js'
import { snapshot } from './write.js'

/** One row of the error table: an arrangement, an operation, the code it must fail with. */
interface ErrorRow {
  readonly operation: string
  readonly arrangement: string
  readonly code: FsErrorCode
  readonly needs?: Needs
  readonly arrange?: (env: Env) => Promise<void>
  readonly run: (env: Env) => Promise<unknown>
}

const edit = (oldString: string, newString = 'x') => ({ oldString, newString, replaceAll: false })
const file = async (env: Env): Promise<void> => {
  await env.write('f.txt', 'one two two')
}
const dir = async (env: Env): Promise<void> => {
  await env.write('d/inner.txt', 'x')
}

/** Targets resolved during an arrangement, for rows whose target can no longer be resolved. */
const early = new WeakMap<Env, FsTarget>()
const earlyTarget = (env: Env): FsTarget => {
  const target = early.get(env)
  if (target === undefined) throw new Error('the arrangement resolved no target')
  return target
}

const BECAME_FILE = 'a target whose parent became a file after resolve'
const parentBecomesFile = async (env: Env): Promise<void> => {
  early.set(env, await env.resolve('p/child.txt'))
  await env.write('p', 'a file now')
}

export const ERROR_TABLE: readonly ErrorRow[] = [
  { operation: 'resolve', arrangement: 'blank path', code: 'FS_NOT_FOUND', run: (env) => env.fs.resolve(' ') },
  { operation: 'resolve', arrangement: 'path through a file', code: 'FS_NOT_FOUND', arrange: file, run: (env) => env.resolve('f.txt/x') },
  { operation: 'resolve', arrangement: 'lone surrogate', code: 'FS_NOT_FOUND', run: (env) => env.fs.resolve('a\uD800.txt') },
  { operation: 'resolve', arrangement: 'NUL byte', code: 'FS_NOT_FOUND', run: (env) => env.fs.resolve('a\0b.txt') },
  { operation: 'lstat', arrangement: 'blank path', code: 'FS_NOT_FOUND', run: (env) => env.fs.lstat('') },
  { operation: 'readText', arrangement: 'missing file', code: 'FS_NOT_FOUND', run: (env) => env.read('nope.txt') },
  { operation: 'readText', arrangement: 'a directory', code: 'FS_NOT_REGULAR_FILE', arrange: dir, run: (env) => env.read('d') },
  { operation: 'streamText', arrangement: 'missing file', code: 'FS_NOT_FOUND', run: (env) => streamChunks(env, 'nope.txt') },
  { operation: 'streamText', arrangement: 'a directory', code: 'FS_NOT_REGULAR_FILE', arrange: dir, run: (env) => streamChunks(env, 'd') },
  { operation: 'listDir', arrangement: 'missing directory', code: 'FS_NOT_FOUND', run: (env) => env.names('nope') },
  { operation: 'listDir', arrangement: 'a file', code: 'FS_NOT_DIRECTORY', arrange: file, run: (env) => env.names('f.txt') },
  { operation: 'writeText', arrangement: 'a directory', code: 'FS_NOT_REGULAR_FILE', arrange: dir, run: (env) => env.write('d', 'x') },
  {
    operation: 'writeText createIfAbsent',
    arrangement: 'existing file',
    code: 'FS_NOT_OBSERVED',
    arrange: file,
    run: async (env) => env.fs.writeText(await env.resolve('f.txt'), 'x', { expected: { kind: 'createIfAbsent' } }),
  },
  {
    operation: 'writeText replaceIfVersion',
    arrangement: 'missing file',
    code: 'FS_STALE_VERSION',
    run: async (env) => env.fs.writeText(await env.resolve('nope.txt'), 'x', { expected: { kind: 'replaceIfVersion', version: FsVersion('v') } }),
  },
  {
    operation: 'writeText replaceIfVersion',
    arrangement: 'other version',
    code: 'FS_STALE_VERSION',
    arrange: file,
    run: async (env) => env.fs.writeText(await env.resolve('f.txt'), 'x', { expected: { kind: 'replaceIfVersion', version: FsVersion('v') } }),
  },
  {
    operation: 'writeText',
    arrangement: 'an unknown guard kind',
    code: 'FS_UNSUPPORTED',
    arrange: file,
    run: async (env) => env.fs.writeText(await env.resolve('f.txt'), 'x', { expected: { kind: 'ifWhatever' } as never }),
  },
  { operation: 'writeText', arrangement: 'lone surrogate', code: 'FS_NOT_TEXT', run: (env) => env.write('s.txt', '\uD83D') },
  // Resolved while the parent was missing: the operation itself must refuse, not resolve.
  { operation: 'writeText', arrangement: BECAME_FILE, code: 'FS_NOT_FOUND', arrange: parentBecomesFile, run: (env) => env.fs.writeText(earlyTarget(env), 'x') },
  { operation: 'readText', arrangement: BECAME_FILE, code: 'FS_NOT_FOUND', arrange: parentBecomesFile, run: (env) => env.fs.readText(earlyTarget(env)) },
  { operation: 'streamText', arrangement: BECAME_FILE, code: 'FS_NOT_FOUND', arrange: parentBecomesFile, run: (env) => env.fs.streamText(earlyTarget(env)) },
  { operation: 'listDir', arrangement: BECAME_FILE, code: 'FS_NOT_FOUND', arrange: parentBecomesFile, run: (env) => env.fs.listDir(earlyTarget(env)) },
  {
    operation: 'editText',
    arrangement: BECAME_FILE,
    code: 'FS_STALE_VERSION',
    arrange: parentBecomesFile,
    run: (env) => env.fs.editText(earlyTarget(env), edit('a')),
  },
  {
    operation: 'editText',
    arrangement: 'missing file',
    code: 'FS_STALE_VERSION',
    run: async (env) => env.fs.editText(await env.resolve('nope.txt'), edit('a')),
  },
  {
    operation: 'editText',
    arrangement: 'a directory',
    code: 'FS_NOT_REGULAR_FILE',
    arrange: dir,
    run: async (env) => env.fs.editText(await env.resolve('d'), edit('a')),
  },
  {
    operation: 'editText',
    arrangement: 'empty oldString',
    code: 'FS_EDIT_NOT_FOUND',
    arrange: file,
    run: async (env) => env.fs.editText(await env.resolve('f.txt'), edit('')),
  },
  {
    operation: 'editText',
    arrangement: 'no match',
    code: 'FS_EDIT_NOT_FOUND',
    arrange: file,
    run: async (env) => env.fs.editText(await env.resolve('f.txt'), edit('three')),
  },
  {
    operation: 'editText',
    arrangement: 'two matches',
    code: 'FS_AMBIGUOUS_EDIT',
    arrange: file,
    run: async (env) => env.fs.editText(await env.resolve('f.txt'), edit('two')),
  },
  {
    operation: 'editText guarded',
    arrangement: 'other version',
    code: 'FS_STALE_VERSION',
    arrange: file,
    run: async (env) => env.fs.editText(await env.resolve('f.txt'), edit('one'), { expected: { version: FsVersion('v') } }),
  },
  {
    operation: 'readText',
    arrangement: 'binary content',
    code: 'FS_NOT_TEXT',
    needs: { hooks: ['writeBytes'] },
    arrange: (env) => env.writeBytes('b.bin', Uint8Array.of(0x89, 0x50, 0x4e, 0x47, 0x00)),
    run: (env) => env.read('b.bin'),
  },
  {
    operation: 'editText',
    arrangement: 'invalid UTF-8',
    code: 'FS_NOT_TEXT',
    needs: { hooks: ['writeBytes'] },
    arrange: (env) => env.writeBytes('b.txt', Uint8Array.of(0x61, 0xc3)),
    run: async (env) => env.fs.editText(await env.resolve('b.txt'), edit('a')),
  },
]

/** Every operation, run with an already-aborted signal. */
const ABORTABLE: ReadonlyArray<readonly [string, (env: Env, signal: AbortSignal) => Promise<unknown>]> = [
  ['resolve', (env, signal) => env.fs.resolve('f.txt', { signal })],
  ['stat', async (env, signal) => env.fs.stat(await env.resolve('f.txt'), { signal })],
  ['lstat', (env, signal) => env.fs.lstat('f.txt', { signal })],
  ['readText', async (env, signal) => env.fs.readText(await env.resolve('f.txt'), { signal })],
  ['streamText', async (env, signal) => env.fs.streamText(await env.resolve('f.txt'), { signal })],
  ['listDir', async (env, signal) => env.fs.listDir(await env.resolve('.'), { signal })],
  ['writeText', async (env, signal) => env.fs.writeText(await env.resolve('f.txt'), 'changed', { signal })],
  ['writeText (new file)', async (env, signal) => env.fs.writeText(await env.resolve('new/g.txt'), 'x', { signal })],
  ['editText', async (env, signal) => env.fs.editText(await env.resolve('f.txt'), edit('one', 'ONE'), { signal })],
]

/** The contract verb of an operation named in a table row (`editText guarded` → `edit`). */
const VERB_OF: Readonly<Record<string, FsVerb>> = {
  resolve: 'resolve',
  stat: 'stat',
  lstat: 'lstat',
  readText: 'read',
  streamText: 'read',
  readBytes: 'read',
  listDir: 'list',
  writeText: 'write',
  editText: 'edit',
}

/** The error `operation` failed with (an `FsError`: anything else fails the test), or `undefined` when it succeeded. */
async function failureOf(operation: Promise<unknown>): Promise<FsError | undefined> {
  let failure: unknown
  const code = await codeOf(
    operation.catch((err: unknown) => {
      failure = err
      throw err
    }),
  )
  return code === 'ok' ? undefined : (failure as FsError)
}

/** The fields every contract error carries: the verb of the operation and a path. */
function expectPlaced(err: FsError | undefined, operation: string): void {
  const verb = VERB_OF[operation.split(' ')[0] ?? '']
  expect(err, 'the operation failed').toBeDefined()
  expect(err?.verb, 'FsError.verb').toBe(verb)
  expect(typeof err?.path, 'FsError.path').toBe('string')
}

export function errorClauses(kit: Kit): void {
  kit.group('errors', {}, () => {
    for (const row of ERROR_TABLE) {
      const needs = { ...row.needs, writes: /^(writeText|editText)/.test(row.operation) }
      kit.testIf(`${row.operation} on ${row.arrangement} is ${row.code} with its verb and path, and the store is unchanged`, needs, async (env) => {
        await row.arrange?.(env)
        const before = await snapshot(env)
        const err = await failureOf(row.run(env))
        expect(err?.code).toBe(row.code)
        expectPlaced(err, row.operation)
        expect(await snapshot(env)).toEqual(before)
      })
    }
  })

  kit.group('abort', {}, () => {
    for (const [name, run] of ABORTABLE) {
      kit.test(`${name} with a pre-aborted signal is FS_ABORTED with its verb and path, and changes nothing`, async (env) => {
        await file(env)
        const before = await snapshot(env)
        const err = await failureOf(run(env, AbortSignal.abort()))
        expect(err?.code).toBe('FS_ABORTED')
        expectPlaced(err, name)
        expect(await snapshot(env)).toEqual(before)
      })
    }
  })
}

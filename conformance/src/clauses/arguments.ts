import fc from 'fast-check'
import { expect } from 'vitest'
import { isFsError, type FsErrorCode, type FsVerb } from '@seamfs/core'
import { codeOf, type Env, type Kit } from '../kit.js'
import { holds } from './seeded.js'

// The argument grammar, drawn: every option of every operation given any value that is not one of
// its accepted forms (other types, near misses of the right shape), and text with a NUL or a lone
// surrogate anywhere. Each is refused with its code before any I/O, and the store is left as it was.

/** Any JavaScript value, and near misses of the option shapes (the right keys, wrong values). */
const junk: fc.Arbitrary<unknown> = fc.oneof(
  fc.anything({ maxDepth: 2, withBoxedValues: true, withMap: true, withSet: true, withNullPrototype: true }),
  fc.constantFrom(null, Number.NaN, -1, 1.5, Number.POSITIVE_INFINITY, '', 'true', [], {}, () => undefined, Symbol('x'), 10n),
  fc.record({ kind: fc.constantFrom('createIfAbsent ', 'replaceIfVersion', 'ReplaceIfVersion', 'create', 42), version: fc.anything({ maxDepth: 0 }) }),
  fc.record({ version: fc.oneof(fc.integer(), fc.constant(null), fc.constant(undefined), fc.array(fc.string(), { maxLength: 2 })) }),
  fc.record({ oldString: fc.oneof(fc.constant(''), fc.integer(), fc.constant(null)), newString: fc.anything({ maxDepth: 0 }) }),
  // One edit more than a call takes, each well formed.
  fc.constant(Array.from({ length: 1001 }, () => ({ oldString: 'nowhere', newString: 'x', replaceAll: false }))),
)

const isVersionGuard = (v: unknown): boolean => typeof v === 'object' && v !== null && typeof (v as { version?: unknown }).version === 'string'
const isWriteIntent = (v: unknown): boolean => {
  const kind = typeof v === 'object' && v !== null ? (v as { kind?: unknown }).kind : undefined
  return kind === 'createIfAbsent' || (kind === 'replaceIfVersion' && isVersionGuard(v))
}
const isEditRequest = (v: unknown): boolean => {
  const r = v as { oldString?: unknown; newString?: unknown; replaceAll?: unknown } | null
  return typeof r === 'object' && r !== null && typeof r.oldString === 'string' && typeof r.newString === 'string'
}

/** A request, or a non-empty list of them (core applies what it is given as a list). */
const isEdit = (v: unknown): boolean => (Array.isArray(v) ? v.length > 0 && v.length <= 1000 && v.every(isEditRequest) : isEditRequest(v))

/** One option of one operation: the values it accepts, the code anything else gets, and the call. */
interface Slot {
  readonly name: string
  readonly accepts: (value: unknown) => boolean
  readonly code: FsErrorCode
  /** The operation the refusal names (`verb`); its `path` is the target's. */
  readonly verb: FsVerb
  readonly call: (env: Env, value: unknown) => Promise<unknown>
  readonly needs?: 'remove' | 'rename'
}

const FILE = 'arg/f.txt'
const target = (env: Env, path = FILE): Promise<Awaited<ReturnType<Env['resolve']>>> => env.resolve(path)

const SLOTS: readonly Slot[] = [
  {
    name: 'writeText expected',
    verb: 'write',
    accepts: (v) => v === undefined || isWriteIntent(v),
    code: 'FS_UNSUPPORTED',
    call: async (env, v) => env.fs.writeText(await target(env), 'changed', { expected: v as never }),
  },
  {
    name: 'writeText before',
    verb: 'write',
    accepts: (v) => v === undefined || typeof v === 'boolean',
    code: 'FS_UNSUPPORTED',
    call: async (env, v) => env.fs.writeText(await target(env), 'changed', { before: v as never }),
  },
  {
    name: 'writeText content',
    verb: 'write',
    accepts: (v) => typeof v === 'string',
    code: 'FS_NOT_TEXT',
    call: async (env, v) => env.fs.writeText(await target(env), v as never),
  },
  {
    name: 'writeBytes content',
    verb: 'write',
    accepts: (v) => v instanceof Uint8Array,
    code: 'FS_UNSUPPORTED',
    call: async (env, v) => env.fs.writeBytes(await target(env), v as never),
  },
  {
    name: 'writeBytes expected',
    verb: 'write',
    accepts: (v) => v === undefined || isWriteIntent(v),
    code: 'FS_UNSUPPORTED',
    call: async (env, v) => env.fs.writeBytes(await target(env), Uint8Array.of(1), { expected: v as never }),
  },
  {
    name: 'editText expected',
    verb: 'edit',
    accepts: (v) => v === undefined || isVersionGuard(v),
    code: 'FS_UNSUPPORTED',
    call: async (env, v) => env.fs.editText(await target(env), { oldString: 'same', newString: 'changed', replaceAll: false }, { expected: v as never }),
  },
  {
    name: 'editText request',
    verb: 'edit',
    accepts: isEdit,
    code: 'FS_EDIT_NOT_FOUND',
    call: async (env, v) => env.fs.editText(await target(env), v as never),
  },
  {
    name: 'editText list',
    verb: 'edit',
    accepts: isEdit,
    code: 'FS_EDIT_NOT_FOUND',
    call: async (env, v) => env.fs.editText(await target(env), (Array.isArray(v) ? v : [v]) as never),
  },
  {
    name: 'readBytes maxBytes',
    verb: 'read',
    accepts: (v) => v === undefined || (Number.isSafeInteger(v) && (v as number) >= 0),
    code: 'FS_UNSUPPORTED',
    call: async (env, v) => env.fs.readBytes(await target(env), { maxBytes: v as never }),
  },
  {
    name: 'listTree prune',
    verb: 'list',
    accepts: (v) => v === undefined || (Array.isArray(v) && v.every((p) => typeof p === 'string')),
    code: 'FS_UNSUPPORTED',
    call: async (env, v) => {
      for await (const page of await env.fs.listTree(await target(env, 'arg'), { prune: v as never })) void page
    },
  },
  {
    name: 'remove expected',
    verb: 'remove',
    accepts: (v) => v === undefined || isVersionGuard(v),
    code: 'FS_UNSUPPORTED',
    call: async (env, v) => env.fs.remove(await target(env), { expected: v as never }),
    needs: 'remove',
  },
  {
    name: 'remove recursive',
    verb: 'remove',
    accepts: (v) => v === undefined || typeof v === 'boolean',
    code: 'FS_UNSUPPORTED',
    call: async (env, v) => env.fs.remove(await target(env), { recursive: v as never }),
    needs: 'remove',
  },
  {
    name: 'rename expected',
    verb: 'rename',
    accepts: (v) => v === undefined || isVersionGuard(v),
    code: 'FS_UNSUPPORTED',
    call: async (env, v) => env.fs.rename(await target(env), await target(env, 'arg/g.txt'), { expected: v as never }),
    needs: 'rename',
  },
  {
    name: 'rename overwrite',
    verb: 'rename',
    accepts: (v) => v === undefined || typeof v === 'boolean' || isVersionGuard(v),
    code: 'FS_UNSUPPORTED',
    call: async (env, v) => env.fs.rename(await target(env), await target(env, 'arg/g.txt'), { overwrite: v as never }),
    needs: 'rename',
  },
]

/** The refusal `operation` ends with: its code, operation and path. */
async function refusal(operation: Promise<unknown>): Promise<{ code: string; verb?: string | undefined; path?: string | undefined }> {
  try {
    await operation
    return { code: 'ok' }
  } catch (err) {
    if (!isFsError(err)) return { code: `not an FsError: ${String(err)}` }
    return { code: err.code, verb: err.verb, path: err.path }
  }
}

async function collectText(env: Env, path: string): Promise<string> {
  let text = ''
  for await (const chunk of await env.fs.streamText(await env.resolve(path))) text += chunk
  return text
}

/** A string with a NUL or a lone surrogate somewhere in it (at the start, the end or between any two characters). */
const withBadUnit = (bad: readonly string[]): fc.Arbitrary<string> =>
  fc.tuple(fc.string({ unit: 'grapheme', maxLength: 8 }), fc.nat(), fc.constantFrom(...bad)).map(([text, at, unit]) => {
    const chars = [...text]
    const i = at % (chars.length + 1)
    return [...chars.slice(0, i), unit, ...chars.slice(i)].join('')
  })
const LONE = ['\uD800', '\uDBFF', '\uDC00', '\uDFFF']

/** Malformed arguments, drawn: refused with their code before any I/O, and nothing changes. */
export function argumentClauses(kit: Kit): void {
  kit.group('generative: arguments', { writes: true }, () => {
    // A slot prints as its name in a counterexample.
    const slots = SLOTS.filter((s) => s.needs === undefined || kit.unmet({ caps: [s.needs] }) === undefined).map((s) =>
      Object.assign({ ...s }, { [fc.toStringMethod]: () => s.name }),
    )
    const title = `any malformed option of any operation (${slots.length} options: other types, near misses) is refused with its code, and nothing changes`
    kit.test(title, async (env) => {
      const { version } = await env.write(FILE, 'same')
      const before = await env.names('arg')
      const cases = fc.tuple(fc.constantFrom(...slots), junk).filter(([slot, value]) => !slot.accepts(value))
      await holds(
        kit,
        title,
        cases,
        async ([slot, value]) => {
          const what = `${slot.name} = ${fc.stringify(value)}`
          const path = slot.name.startsWith('listTree') ? 'arg' : FILE
          expect(await refusal(slot.call(env, value)), what).toEqual({ code: slot.code, verb: slot.verb, path: (await target(env, path)).displayPath })
          expect((await env.fs.stat(await target(env)))?.version, `the version after ${what}`).toBe(version)
          expect(await env.read(FILE), `the content after ${what}`).toBe('same')
          expect(await env.names('arg'), `the listing after ${what}`).toEqual(before)
        },
        kit.tuning.generativeRuns * 4,
      )
    })

    const textTitle =
      'text with a lone surrogate anywhere is FS_NOT_TEXT (writeText, newString) or FS_EDIT_NOT_FOUND (oldString); a path or cwd with one, or a NUL, or a blank path is FS_NOT_FOUND'
    kit.test(textTitle, async (env) => {
      const { version } = await env.write(FILE, 'same')
      const lone = withBadUnit(LONE)
      const cases = fc.oneof(
        lone.map((s) => ['writeText', s] as const),
        lone.map((s) => ['newString', s] as const),
        lone.map((s) => ['oldString', s] as const),
        withBadUnit([...LONE, '\0']).map((s) => ['path', s] as const),
        withBadUnit([...LONE, '\0']).map((s) => ['cwd', s] as const),
        fc.stringMatching(/^[ \t\n\r\f\v\u00a0\u2028\u3000]*$/).map((s) => ['blank path', s] as const),
      )
      await holds(kit, textTitle, cases, async ([where, text]) => {
        const t = await target(env)
        const what = `${where} ${JSON.stringify(text)}`
        const code =
          where === 'writeText'
            ? codeOf(env.fs.writeText(t, text))
            : where === 'newString'
              ? codeOf(env.fs.editText(t, { oldString: 'same', newString: text, replaceAll: false }))
              : where === 'oldString'
                ? codeOf(env.fs.editText(t, { oldString: text, newString: 'x', replaceAll: false }))
                : where === 'cwd'
                  ? codeOf(env.fs.resolve('f.txt', { cwd: text }))
                  : codeOf(env.fs.resolve(text))
        const expected = where === 'writeText' || where === 'newString' ? 'FS_NOT_TEXT' : where === 'oldString' ? 'FS_EDIT_NOT_FOUND' : 'FS_NOT_FOUND'
        expect(await code, what).toBe(expected)
        expect((await env.fs.stat(t))?.version, `the version after ${what}`).toBe(version)
      })
    })
  })

  const LIMIT = 4096
  const limitsTitle = `any size around maxTextBytes (${LIMIT}): a whole-text read, an edit and a write above it are FS_TOO_LARGE and change nothing; a stream reads it whole`
  kit.group('generative: limits', { writes: true, hooks: ['writeBytes'] }, () => {
    kit.test(
      limitsTitle,
      async (env) => {
        const sizes = fc.oneof(fc.constantFrom(LIMIT - 1, LIMIT, LIMIT + 1, 0, 2 * LIMIT), fc.integer({ min: 0, max: 2 * LIMIT }))
        let n = 0
        await holds(kit, limitsTitle, sizes, async (size) => {
          const path = `lim/${n++}.txt`
          // One unique marker, then two-byte characters: `size` bytes.
          const content = size === 0 ? '' : `Z${'é'.repeat((size - 1) >> 1)}${'a'.repeat((size - 1) & 1)}`
          const above = size > LIMIT
          await env.writeBytes(path, content)
          const t = await env.resolve(path)
          const version = (await env.fs.stat(t))?.version
          expect(await codeOf(env.fs.readText(t)), `readText of ${size} bytes`).toBe(above ? 'FS_TOO_LARGE' : 'ok')
          expect(await codeOf(env.fs.readBytes(t)), `readBytes of ${size} bytes`).toBe(above ? 'FS_TOO_LARGE' : 'ok')
          expect((await collectText(env, path)).length, `streamText of ${size} bytes`).toBe(content.length)
          const edit = { oldString: 'Z', newString: 'Y', replaceAll: false }
          const edited = await codeOf(env.fs.editText(t, edit))
          expect(edited, `editText of ${size} bytes`).toBe(above ? 'FS_TOO_LARGE' : size === 0 ? 'FS_EDIT_NOT_FOUND' : 'ok')
          if (above) expect((await env.fs.stat(t))?.version, `the version after a refused edit of ${size} bytes`).toBe(version)
          expect(await codeOf(env.fs.writeText(await env.resolve(`${path}.w`), content)), `writeText of ${size} bytes`).toBe(above ? 'FS_TOO_LARGE' : 'ok')
          expect(await env.fs.stat(await env.resolve(`${path}.w`)), `what a refused write of ${size} bytes left`).toEqual(above ? undefined : expect.anything())
        })
      },
      undefined,
      { limits: { maxTextBytes: LIMIT } },
    )
  })

  const modesTitle =
    'any mode: a file that grants write permission to no one refuses writes and edits (FS_PERMISSION_DENIED, content, mode and version kept); any other mode is written and kept'
  kit.group('generative: modes', { writes: true, caps: ['permissions'], hooks: ['chmod', 'mode'] }, () => {
    kit.test(modesTitle, async (env) => {
      let n = 0
      // Owner read at least: the kit reads the file back.
      const modes = fc.integer({ min: 0, max: 0o777 }).map((m) => m | 0o400)
      await holds(kit, modesTitle, modes, async (mode) => {
        const path = `mode/${n++}.txt`
        await env.write(path, 'before')
        await env.chmod(path, mode)
        const t = await env.resolve(path)
        const version = (await env.fs.stat(t))?.version
        const denied = (mode & 0o222) === 0
        const shown = mode.toString(8)
        expect(await codeOf(env.fs.writeText(t, 'written')), `writeText at mode ${shown}`).toBe(denied ? 'FS_PERMISSION_DENIED' : 'ok')
        expect(
          await codeOf(env.fs.editText(t, { oldString: denied ? 'before' : 'written', newString: 'edited', replaceAll: false })),
          `editText at mode ${shown}`,
        ).toBe(denied ? 'FS_PERMISSION_DENIED' : 'ok')
        expect(await codeOf(env.fs.writeText(t, 'x', { expected: { kind: 'createIfAbsent' } })), `createIfAbsent at mode ${shown}`).toBe('FS_NOT_OBSERVED')
        expect((await env.mode(path)).toString(8), `the mode after writes at mode ${shown}`).toBe(shown)
        expect(await env.read(path), `the content after writes at mode ${shown}`).toBe(denied ? 'before' : 'edited')
        if (denied) expect((await env.fs.stat(t))?.version, `the version after refusals at mode ${shown}`).toBe(version)
      })
    })
  })
}

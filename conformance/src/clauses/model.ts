import fc from 'fast-check'
import { expect } from 'vitest'
import type { Env, Kit } from '../kit.js'
import { DeleteCmd, EditCmd, EditPart, ExternalWriteCmd, ListCmd, ReadCmd, RecreateCmd, StatCmd, WriteCmd } from './model-commands.js'
import { addParents, Bin, BOM, DIRS, PATHS, show, Where, type Cmd, type Content, type Model, type Path, type World } from './model-state.js'
import { BytesReadCmd, BytesWriteCmd, DirRenameCmd, MkdirCmd, OpenCmd, RemoveCmd, RenameCmd, TreeCmd } from './model-tree.js'

/** Directory moves: between the two homes of `f.txt`, to and from `y`, and one into itself. */
const DIR_MOVES = [
  ['d/e', 'x'],
  ['x', 'd/e'],
  ['x', 'y'],
  ['y', 'd/e'],
  ['d', 'd/e'],
] as const

/** Byte sequences that make content not text: invalid UTF-8 of each kind, and a NUL. */
const NOT_TEXT = [[0xff], [0x80], [0xc3], [0xe4, 0xb8], [0xc0, 0xaf], [0xed, 0xa0, 0x80], [0xf4, 0x90, 0x80, 0x80], [0x00]]

function isText(bytes: Uint8Array): boolean {
  if (bytes.subarray(0, 8192).includes(0)) return false
  try {
    new TextDecoder('utf-8', { fatal: true }).decode(bytes)
    return true
  } catch {
    return false
  }
}
/** The share of edits, and of guarded writes, that must succeed: byte-level damage is done by successful mutations only. */
const MIN_SUCCESS_SHARE = 0.3
/** Below this many attempts (a tiny `modelRuns`) the share is not asserted. */
const MIN_ATTEMPTS_FOR_SHARE = 50

/** The kinds of command, in the order the tallies are printed. */
const KINDS = [
  'edit',
  'multi-edit',
  'guarded write',
  'write',
  'write bytes',
  'remove',
  'rename',
  'rename directory',
  'create directory',
  're-create after delete',
  'read',
  'read bytes',
  'stream or open',
  'list tree',
  'stat',
  'list',
  'external write',
  'external delete',
]

/** A fresh store holding `initial`: written behind the filesystem's back where the backend allows it (unobserved), else through it. */
async function prepare(env: Env, world: World, initial: readonly (readonly [Path, string])[], external: boolean): Promise<{ model: Model; real: Env }> {
  const model: Model = { files: new Map(), known: new Map(), dirs: new Set(), made: new Set(), mtimes: new Map(), world }
  for (const [path, content] of initial) {
    if (external) await env.writeBytes(path, content)
    else {
      const outcome = await env.fs.writeText(await env.resolve(path), content)
      model.known.set(path, { version: outcome.version, content, touched: false })
    }
    model.files.set(path, content)
    addParents(model, path)
  }
  return { model, real: env }
}

/** File text: lines with LF, CRLF or mixed breaks, a lone CR now and then, 4-byte characters, `$`, and a BOM when `bomWeight` says. */
function textArb(bomWeight: number): fc.Arbitrary<string> {
  const unit = fc.oneof({ weight: 20, arbitrary: fc.constantFrom('a', 'a', 'b', 'x', 'é', '中', '🐂', '$', ' ') }, { weight: 1, arbitrary: fc.constant('\r') })
  const line = fc.string({ unit, maxLength: 8 })
  return fc
    .record({
      lines: fc.array(fc.tuple(line, fc.boolean()), { maxLength: 6 }),
      style: fc.constantFrom('lf', 'crlf', 'mixed'),
      last: fc.string({ unit, maxLength: 4 }),
      bom: fc.oneof({ weight: 100 - bomWeight, arbitrary: fc.constant('') }, { weight: bomWeight, arbitrary: fc.constant(BOM) }),
    })
    .map(({ lines, style, last, bom }) => {
      const eol = (crlf: boolean): string => (style === 'lf' ? '\n' : style === 'crlf' || crlf ? '\r\n' : '\n')
      return bom + lines.map(([text, crlf]) => text + eol(crlf)).join('') + last
    })
}

/**
 * Command sequences: most short (each run pays for a fresh store), one in six long enough for a
 * file to be written, edited many times over, deleted and re-created in one run. Lengths are
 * uniform up to the maximum: the mean is about 7 commands.
 */
function sequences(command: fc.Arbitrary<Cmd>): fc.Arbitrary<Iterable<Cmd>> {
  return fc.oneof(
    { weight: 5, arbitrary: fc.commands([command], { maxCommands: 8, size: 'max' }) },
    { weight: 1, arbitrary: fc.commands([command], { maxCommands: 40, size: 'max' }) },
  )
}

export function modelClauses(kit: Kit, external: boolean): void {
  const seed = Number(process.env['SEAMFS_MODEL_SEED'] ?? kit.tuning.modelSeed)
  const replayPath = process.env['SEAMFS_MODEL_PATH']
  const runs = kit.tuning.modelRuns
  const canRemove = kit.unmet({ hooks: ['remove'] }) === undefined
  const world: World = { tallies: new Map(), readBytes: kit.unmet({ hooks: ['readBytes'] }) === undefined, caps: kit.caps }
  const can = (cap: 'remove' | 'rename' | 'createDirectory'): boolean => kit.unmet({ caps: [cap] }) === undefined
  const path = fc.constantFrom(...PATHS)
  const where = (...prefer: ('fixed' | 'existing' | 'missing')[]): fc.Arbitrary<Where> =>
    fc.tuple(path, fc.constantFrom(...prefer), fc.nat(7)).map(([p, pick, i]) => new Where(p, pick, i))
  const text = textArb(10)
  const needle = fc.string({ unit: fc.constantFrom('a', 'b', '\n', '\r\n', 'é', 'q'), maxLength: 3 })
  const newString = fc
    .array(fc.constantFrom('', 'a', 'Z', 'ü', '🐂', '\n', '\r\n', '$', '$&', '$$', "$'", '$`', '$1', '$<x>'), { maxLength: 4 })
    .map((t) => t.join(''))
  const piece = fc.record({
    at: fc.nat(999),
    length: fc.integer({ min: 1, max: 12 }),
    unique: fc.oneof({ weight: 6, arbitrary: fc.constant(true) }, fc.constant(false)),
  })
  const weighted = <T>(...choices: [number, T][]): fc.Arbitrary<T> => fc.oneof(...choices.map(([weight, v]) => ({ weight, arbitrary: fc.constant(v) })))
  const part = fc
    .tuple(fc.option(piece, { freq: 6 }), needle, newString, weighted([2, false], [1, true]), weighted([3, false], [1, true]))
    .map(([p, l, n, all, crlf]) => new EditPart(p, l, n, all, crlf))
  // Bytes: text (stored as its UTF-8), or text with a sequence in it that makes it not text.
  const binary = fc
    .tuple(textArb(10), fc.constantFrom(...NOT_TEXT), textArb(10))
    .map(([a, bad, b]) => Uint8Array.from([...new TextEncoder().encode(a), ...bad, ...new TextEncoder().encode(b)]))
    .filter((bytes) => !isText(bytes))
    .map((bytes): Content => new Bin(bytes))
  const content: fc.Arbitrary<Content> = fc.oneof(text, binary)
  const commands: fc.WeightedArbitrary<Cmd>[] = [
    { weight: 2, arbitrary: fc.tuple(where('fixed'), text).map(([w, t]) => new WriteCmd(w, t, 'none', false)) },
    { weight: 3, arbitrary: fc.tuple(where('missing', 'missing', 'fixed'), text).map(([w, t]) => new WriteCmd(w, t, 'create', false)) },
    {
      weight: 5,
      arbitrary: fc.tuple(where('existing', 'existing', 'fixed'), text, weighted([2, true], [1, false])).map(([w, t, f]) => new WriteCmd(w, t, 'replace', f)),
    },
    {
      weight: 12,
      arbitrary: fc
        .tuple(
          where('existing', 'existing', 'existing', 'fixed'),
          fc.oneof({ weight: 5, arbitrary: fc.array(part, { minLength: 1, maxLength: 1 }) }, fc.array(part, { minLength: 2, maxLength: 3 })),
          weighted([4, false], [1, true]),
          weighted([4, 'none' as const], [2, 'known' as const], [3, 'fresh' as const]),
        )
        .map(([w, parts, asList, guard]) => new EditCmd(w, parts, asList, guard)),
    },
    {
      weight: 3,
      arbitrary: fc
        .tuple(where('fixed', 'existing', 'missing'), content, weighted([2, 'none' as const], [1, 'create' as const], [2, 'replace' as const]))
        .map(([w, c, g]) => new BytesWriteCmd(w, c, g)),
    },
    { weight: 1, arbitrary: path.map((p) => new BytesReadCmd(p)) },
    {
      weight: 1,
      arbitrary: fc
        .tuple(fc.constantFrom<string>(...PATHS, 'd'), fc.constantFrom('streamBytes' as const, 'streamText' as const, 'openFile' as const))
        .map(([p, via]) => new OpenCmd(p, via)),
    },
    { weight: 1, arbitrary: fc.constantFrom<string>(...DIRS, 'a.txt').map((d) => new TreeCmd(d)) },
    { weight: 2, arbitrary: path.map((p) => new ReadCmd(p)) },
    { weight: 2, arbitrary: fc.constantFrom<string>(...PATHS, ...DIRS).map((p) => new StatCmd(p)) },
    { weight: 2, arbitrary: fc.constantFrom(...DIRS).map((d) => new ListCmd(d)) },
    ...(external ? [{ weight: 3, arbitrary: fc.tuple(path, textArb(30)).map(([p, t]) => new ExternalWriteCmd(p, t)) }] : []),
    ...(canRemove
      ? [
          { weight: 1, arbitrary: where('existing').map((w) => new DeleteCmd(w)) },
          { weight: 1, arbitrary: fc.tuple(where('existing'), text).map(([w, t]) => new RecreateCmd(w, t)) },
        ]
      : []),
  ]
  const guard = weighted([3, 'none' as const], [1, 'known' as const], [2, 'fresh' as const])
  // The test's directory is not the store's root everywhere (a local store's root is `/`): it is never removed here.
  if (can('remove')) {
    const target = fc.oneof({ weight: 3, arbitrary: where('existing', 'existing', 'fixed') }, fc.constantFrom<string>(...DIRS.filter((d) => d !== '.')))
    commands.push({ weight: 3, arbitrary: fc.tuple(target, guard, fc.boolean()).map(([w, g, r]) => new RemoveCmd(w, g, r)) })
  }
  if (can('rename')) {
    const overwrite = weighted([2, 'no' as const], [1, 'any' as const], [2, 'version' as const])
    const to = fc.oneof({ weight: 6, arbitrary: path }, fc.constantFrom<string>('d', 'x', 'y'))
    const from = where('existing', 'existing', 'fixed')
    commands.push({ weight: 4, arbitrary: fc.tuple(from, to, overwrite, guard).map(([w, t, o, g]) => new RenameCmd(w, t, o, g)) })
    commands.push({ weight: 1, arbitrary: fc.constantFrom(...DIR_MOVES).map(([a, b]) => new DirRenameCmd(a, b)) })
  }
  if (can('createDirectory')) commands.push({ weight: 2, arbitrary: fc.constantFrom<string>(...DIRS, 'a.txt', 'b.txt').map((p) => new MkdirCmd(p)) })
  // Each run starts with a few files, so that edits from its first command on can succeed.
  const initialFiles = fc
    .uniqueArray(fc.tuple(path, textArb(30)), { maxLength: PATHS.length, selector: ([p]) => p })
    .map((files) => Object.assign([...files], { [fc.toStringMethod]: () => `files(${files.map(([p, c]) => `${p}: ${show(c)}`).join(', ')})` }))
  const hooks = [external ? 'external writes' : '', canRemove ? 'deletes' : ''].filter((h) => h !== '')
  const title = `random command sequences agree with a plain model (seed ${seed}, ${runs} runs${hooks.length > 0 ? `, with ${hooks.join(' and ')}` : ''})`
  kit.group('model-based', { writes: true }, () => {
    kit.test(
      title,
      async () => {
        world.tallies.clear()
        const property = fc.asyncProperty(initialFiles, sequences(fc.oneof(...commands)), (initial, cmds) =>
          kit.withEnv((env) => fc.asyncModelRun(() => prepare(env, world, initial, external), cmds)),
        )
        const details = await fc.check(property, {
          numRuns: runs,
          seed,
          ...(replayPath === undefined ? {} : { path: replayPath }),
          endOnFailure: true,
        })
        const counts = [...world.tallies]
          .sort(([a], [b]) => KINDS.indexOf(a) - KINDS.indexOf(b))
          .map(([kind, t]) => `${kind} ${t.ok}/${t.attempts} ok`)
          .join(', ')
        console.log(`model: seed ${seed}, runs ${details.numRuns} — ${counts}`)
        if (details.failed) {
          const replay = `SEAMFS_MODEL_SEED=${details.seed} SEAMFS_MODEL_PATH=${String(details.counterexamplePath)}`
          throw new Error(
            `model-based test failed after ${details.numRuns} runs.\n` +
              `Counterexample: ${fc.stringify(details.counterexample)}\n` +
              `Error: ${details.errorInstance instanceof Error ? details.errorInstance.message : String(details.errorInstance)}\n` +
              `Replay: ${replay} npx vitest run -t "model-based"`,
            { cause: details.errorInstance },
          )
        }
        if (replayPath !== undefined) return
        for (const kind of ['edit', 'guarded write']) {
          const { attempts, ok } = world.tallies.get(kind) ?? { attempts: 0, ok: 0 }
          const what = `the share of ${kind}s that succeed (${ok}/${attempts}): the generators must reach success`
          if (attempts >= MIN_ATTEMPTS_FOR_SHARE) expect(ok / attempts, what).toBeGreaterThanOrEqual(MIN_SUCCESS_SHARE)
        }
      },
      Math.max(kit.tuning.timeoutMs, runs * 2_000),
    )
  })
}

import fc from 'fast-check'
import { expect } from 'vitest'
import { FsVersion, type FsErrorCode } from '@seamfs/core/backend'
import { codeOf, type Env, type Kit } from '../kit.js'
import { byUtf8Bytes } from './list.js'

/** The deliberately plain model: file contents by path, and what the test last observed of each. */
interface Model {
  readonly files: Map<string, string>
  /** Version last observed per path, the content it had, and whether the store changed behind our back since. */
  readonly known: Map<string, { version: FsVersion; content: string; touched: boolean }>
}

type Cmd = fc.AsyncCommand<Model, Env>

const PATHS = ['a.txt', 'b.txt', 'd/c.txt', 'd/e/f.txt'] as const
const DIRS = ['.', 'd', 'd/e'] as const
const NEVER = FsVersion('never-observed')

const show = (s: string): string => JSON.stringify(s)

/** What a guard built from the model should meet: `ok`, `stale`, or `either` after an external same-content write. */
function guardState(m: Model, path: string): 'ok' | 'stale' | 'either' {
  const known = m.known.get(path)
  const content = m.files.get(path)
  if (known === undefined || content === undefined) return 'stale'
  if (!known.touched) return 'ok'
  return content === known.content ? 'either' : 'stale'
}

function countMatches(text: string, needle: string): number {
  let count = 0
  for (let i = text.indexOf(needle); i !== -1; i = text.indexOf(needle, i + needle.length)) count++
  return count
}

function expectCode(actual: FsErrorCode | 'ok', allowed: readonly (FsErrorCode | 'ok')[]): void {
  expect(allowed).toContain(actual)
}

class WriteCmd implements Cmd {
  constructor(
    readonly path: string,
    readonly text: string,
    readonly guard: 'none' | 'create' | 'replace',
  ) {}
  check = (): true => true
  async run(m: Model, env: Env): Promise<void> {
    const existed = m.files.get(this.path)
    const target = await env.resolve(this.path)
    const known = m.known.get(this.path)
    let allowed: (FsErrorCode | 'ok')[] = ['ok']
    if (this.guard === 'create' && existed !== undefined) allowed = ['FS_NOT_OBSERVED']
    if (this.guard === 'replace') {
      const state = guardState(m, this.path)
      allowed = state === 'ok' ? ['ok'] : state === 'stale' ? ['FS_STALE_VERSION'] : ['ok', 'FS_STALE_VERSION']
    }
    const expected =
      this.guard === 'none'
        ? undefined
        : this.guard === 'create'
          ? ({ kind: 'createIfAbsent' } as const)
          : ({ kind: 'replaceIfVersion', version: known?.version ?? NEVER } as const)
    let outcome: Awaited<ReturnType<Env['fs']['writeText']>> | undefined
    expectCode(await codeOf(async () => (outcome = await env.fs.writeText(target, this.text, { expected }))), allowed)
    if (outcome === undefined) return
    expect(outcome.operation).toBe(existed === undefined ? 'create' : 'update')
    expect(outcome.after).toBe(this.text)
    if (existed !== undefined && outcome.before !== null) expect(outcome.before).toBe(existed)
    m.files.set(this.path, this.text)
    m.known.set(this.path, { version: outcome.version, content: this.text, touched: false })
  }
  toString = (): string => `write(${this.path}, ${show(this.text)}, ${this.guard})`
}

class EditCmd implements Cmd {
  constructor(
    readonly path: string,
    readonly oldString: string,
    readonly newString: string,
    readonly replaceAll: boolean,
    readonly guarded: boolean,
  ) {}
  check = (): true => true
  async run(m: Model, env: Env): Promise<void> {
    const current = m.files.get(this.path)
    const target = await env.resolve(this.path)
    let allowed: (FsErrorCode | 'ok')[]
    let next: string | undefined
    if (this.oldString === '') allowed = ['FS_EDIT_NOT_FOUND']
    else if (current === undefined) allowed = ['FS_STALE_VERSION']
    else {
      const state = this.guarded ? guardState(m, this.path) : 'ok'
      const count = countMatches(current, this.oldString)
      const matchCode: FsErrorCode | 'ok' = count === 0 ? 'FS_EDIT_NOT_FOUND' : count > 1 && !this.replaceAll ? 'FS_AMBIGUOUS_EDIT' : 'ok'
      if (matchCode === 'ok') next = current.split(this.oldString).join(this.newString)
      allowed = state === 'stale' ? ['FS_STALE_VERSION'] : state === 'either' ? [matchCode, 'FS_STALE_VERSION'] : [matchCode]
    }
    const expected = this.guarded ? { version: m.known.get(this.path)?.version ?? NEVER } : undefined
    const request = { oldString: this.oldString, newString: this.newString, replaceAll: this.replaceAll }
    let outcome: Awaited<ReturnType<Env['fs']['editText']>> | undefined
    expectCode(await codeOf(async () => (outcome = await env.fs.editText(target, request, { expected }))), allowed)
    if (outcome === undefined || next === undefined) return
    expect(outcome.before).toBe(current)
    expect(outcome.after).toBe(next)
    m.files.set(this.path, next)
    m.known.set(this.path, { version: outcome.version, content: next, touched: false })
  }
  toString = (): string =>
    `edit(${this.path}, ${show(this.oldString)} → ${show(this.newString)}${this.replaceAll ? ', all' : ''}${this.guarded ? ', guarded' : ''})`
}

class ReadCmd implements Cmd {
  constructor(readonly path: string) {}
  check = (): true => true
  async run(m: Model, env: Env): Promise<void> {
    const content = m.files.get(this.path)
    if (content === undefined) expect(await codeOf(env.read(this.path))).toBe('FS_NOT_FOUND')
    else expect(await env.read(this.path)).toBe(content)
  }
  toString = (): string => `read(${this.path})`
}

class StatCmd implements Cmd {
  constructor(readonly path: string) {}
  check = (): true => true
  async run(m: Model, env: Env): Promise<void> {
    const content = m.files.get(this.path)
    const info = await env.fs.stat(await env.resolve(this.path))
    if (content === undefined) {
      expect(info).toBeUndefined()
      return
    }
    expect(info?.type).toBe('file')
    expect(info?.size).toBe(new TextEncoder().encode(content).length)
    const state = guardState(m, this.path)
    const known = m.known.get(this.path)
    if (known !== undefined && state === 'ok') expect(info?.version).toBe(known.version)
    if (known !== undefined && state === 'stale') expect(info?.version).not.toBe(known.version)
    if (info !== undefined) m.known.set(this.path, { version: info.version, content, touched: false })
  }
  toString = (): string => `stat(${this.path})`
}

class ListCmd implements Cmd {
  constructor(readonly dir: string) {}
  check = (): true => true
  async run(m: Model, env: Env): Promise<void> {
    const prefix = this.dir === '.' ? '' : `${this.dir}/`
    const children = new Map<string, 'file' | 'directory'>()
    for (const path of m.files.keys()) {
      if (!path.startsWith(prefix)) continue
      const [head, ...rest] = path.slice(prefix.length).split('/')
      if (head !== undefined) children.set(head, rest.length === 0 ? 'file' : 'directory')
    }
    if (this.dir !== '.' && children.size === 0) {
      expect(['FS_NOT_FOUND', 'ok']).toContain(await codeOf(env.names(this.dir)))
      return
    }
    const entries = await env.fs.listDir(await env.resolve(this.dir))
    const expected = [...children.entries()].sort((a, b) => byUtf8Bytes(a[0], b[0]))
    expect(entries.map((e) => [e.name, e.type])).toEqual(expected)
  }
  toString = (): string => `list(${this.dir})`
}

class ExternalWriteCmd implements Cmd {
  constructor(
    readonly path: string,
    readonly text: string,
  ) {}
  check = (m: Model): boolean => m.files.has(this.path)
  async run(m: Model, env: Env): Promise<void> {
    await env.writeBytes(this.path, this.text)
    m.files.set(this.path, this.text)
    const known = m.known.get(this.path)
    if (known !== undefined) known.touched = true
  }
  toString = (): string => `externalWrite(${this.path}, ${show(this.text)})`
}

export function modelClauses(kit: Kit, external: boolean): void {
  const seed = Number(process.env['SEAMFS_MODEL_SEED'] ?? kit.tuning.modelSeed)
  const replayPath = process.env['SEAMFS_MODEL_PATH']
  const runs = kit.tuning.modelRuns
  const path = fc.constantFrom(...PATHS)
  const text = fc.string({ unit: fc.constantFrom('a', 'b', 'é', '中', '\n', '$', ' '), maxLength: 12 })
  const needle = fc.string({ unit: fc.constantFrom('a', 'b', '\n', 'é'), maxLength: 3 })
  const commands = [
    fc.tuple(path, text, fc.constantFrom<'none' | 'create' | 'replace'>('none', 'create', 'replace')).map(([p, t, g]) => new WriteCmd(p, t, g)),
    fc.tuple(path, needle, needle, fc.boolean(), fc.boolean()).map(([p, o, n, a, g]) => new EditCmd(p, o, n, a, g)),
    path.map((p) => new ReadCmd(p)),
    path.map((p) => new StatCmd(p)),
    fc.constantFrom(...DIRS).map((d) => new ListCmd(d)),
    ...(external ? [fc.tuple(path, text).map(([p, t]) => new ExternalWriteCmd(p, t))] : []),
  ]
  const title = `random command sequences agree with a plain model (seed ${seed}, ${runs} runs${external ? ', with external writes' : ''})`
  kit.group('model-based', {}, () => {
    kit.test(
      title,
      async () => {
        const property = fc.asyncProperty(fc.commands(commands, { maxCommands: 40 }), (cmds) =>
          kit.withEnv((env) => fc.asyncModelRun(() => ({ model: { files: new Map(), known: new Map() }, real: env }), cmds)),
        )
        const details = await fc.check(property, {
          numRuns: runs,
          seed,
          ...(replayPath === undefined ? {} : { path: replayPath }),
          endOnFailure: true,
        })
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
      },
      Math.max(kit.tuning.timeoutMs, runs * 2_000),
    )
  })
}

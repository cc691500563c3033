import { spawn } from 'node:child_process'
import { createHash } from 'node:crypto'
import { expect } from 'vitest'
import type { GuardStrength } from '@seamfs/core'
import type { Env, Kit } from '../kit.js'

/** Processes, sessions each, and how long they race (ms): bounded, they stop by themselves. */
const PROCESSES = 3
const SESSIONS = 3
const RACE_MS = 2500
/** How long the drawn guarded mix races (ms). */
const DRAWN_MS = 1500
/** Rounds of the move race, and the time between their starts (the processes start once). */
const MOVE_ROUNDS = 5
const ROUND_GAP_MS = 250
const FILES = ['a.txt', 'b.txt', 'c.txt']
const END = 'END\n'

/**
 * The child: opens the store through the subject's module, then each session loops until the
 * deadline over the shared files, alternating a read → guarded write (retried when stale) and an
 * unguarded edit, each appending one unique line. It prints what was reported, as JSON.
 */
const RACER = `
const [moduleUrl, descriptorJson, id, sessions, raceMs, filesJson] = process.argv.slice(1)
const mod = await import(moduleUrl)
const fs = await (mod.open ?? mod.default)(JSON.parse(descriptorJson))
const files = JSON.parse(filesJson)
const deadline = Date.now() + Number(raceMs)
const ok = [], stale = [], failed = []
async function session(s) {
  for (let i = 0; Date.now() < deadline; i++) {
    const name = files[(i + s) % files.length]
    const line = id + '-' + s + '-' + i
    try {
      const t = await fs.resolve(name)
      if (i % 2 === 0) {
        // The version first: content read after it is as new or newer, so a guard on it is never too weak.
        const { version } = await fs.stat(t)
        const content = await fs.readText(t)
        const at = content.lastIndexOf('END\\n')
        const next = content.slice(0, at) + line + '\\n' + content.slice(at)
        await fs.writeText(t, next, { expected: { kind: 'replaceIfVersion', version } })
      } else {
        await fs.editText(t, { oldString: 'END\\n', newString: line + '\\nEND\\n' })
      }
      ok.push(line)
    } catch (err) {
      if (err?.code === 'FS_STALE_VERSION') stale.push(line)
      else failed.push(line + ' ' + (err?.code ?? '') + ' ' + (err?.message ?? String(err)))
    }
  }
}
await Promise.all(Array.from({ length: Number(sessions) }, (_, s) => session(s)))
await fs.close()
// Exit once the pipe took it all: process.exit right after a large write would cut it.
process.stdout.write(JSON.stringify({ ok, stale, failed }) + '\\n', () => process.exit(0))
`

/**
 * The child of the move race: for each round, waits for the round's start time, then moves that
 * round's file to its own name under the version it was given; prints the outcomes.
 */
const MOVER = `
const [moduleUrl, descriptorJson, id, startAt, gapMs, versionsJson] = process.argv.slice(1)
const mod = await import(moduleUrl)
const fs = await (mod.open ?? mod.default)(JSON.parse(descriptorJson))
const outcomes = []
for (const [round, version] of JSON.parse(versionsJson).entries()) {
  const from = await fs.resolve('moved-' + round + '.txt')
  const to = await fs.resolve('moved-' + round + '-' + id + '.txt')
  await new Promise((r) => setTimeout(r, Math.max(0, Number(startAt) + round * Number(gapMs) - Date.now())))
  try {
    await fs.rename(from, to, { expected: { version } })
    outcomes.push('ok')
  } catch (err) {
    outcomes.push(err?.code ?? String(err))
  }
}
await fs.close()
process.stdout.write(JSON.stringify({ outcomes }) + '\\n', () => process.exit(0))
`

/**
 * The child of the mixed race: each session loops until the deadline, moving a shared file between
 * its two names, editing it under whichever name holds it, or deleting and re-creating a scratch
 * file. It prints the edits reported successful (per file) and the tags of the contents it created.
 */
const MIXER = `
const [moduleUrl, descriptorJson, id, sessions, raceMs, count] = process.argv.slice(1)
const mod = await import(moduleUrl)
const fs = await (mod.open ?? mod.default)(JSON.parse(descriptorJson))
const deadline = Date.now() + Number(raceMs)
const edits = {}, created = [], failed = []
const names = (f) => ['f' + f + '.txt', 'f' + f + '.moved.txt']
const expectedLoss = new Set(['FS_STALE_VERSION', 'FS_NOT_FOUND', 'FS_NOT_OBSERVED'])
async function session(s) {
  for (let i = 0; Date.now() < deadline; i++) {
    const f = (i * 7 + s) % Number(count)
    const op = (i + s) % 3
    const tag = id + '-' + s + '-' + i
    try {
      if (op === 0) {
        const [a, b] = names(f)
        const pair = i % 2 === 0 ? [a, b] : [b, a]
        await fs.rename(await fs.resolve(pair[0]), await fs.resolve(pair[1]))
      } else if (op === 1) {
        for (const name of names(f)) {
          try {
            await fs.editText(await fs.resolve(name), { oldString: 'END\\n', newString: tag + '\\nEND\\n' })
            ;(edits[f] ??= []).push(tag)
            break
          } catch (err) {
            if (!expectedLoss.has(err?.code)) throw err
          }
        }
      } else {
        const g = await fs.resolve('g' + f + '.txt')
        if (i % 2 === 0) await fs.remove(g)
        else {
          await fs.writeText(g, ('G ' + tag + '\\n').repeat(50), { expected: { kind: 'createIfAbsent' } })
          created.push(tag)
        }
      }
    } catch (err) {
      if (!expectedLoss.has(err?.code)) failed.push(tag + ' ' + (err?.code ?? '') + ' ' + (err?.message ?? String(err)))
    }
  }
}
await Promise.all(Array.from({ length: Number(sessions) }, (_, s) => session(s)))
await fs.close()
process.stdout.write(JSON.stringify({ edits, created, failed }) + '\\n', () => process.exit(0))
`

/**
 * The child of the drawn guarded mix: each session draws, from its own seed, a file of three and a
 * guarded mutation of it — `writeText` or `writeBytes` under `replaceIfVersion`, `editText` or
 * `remove` under `expected`, a create under `createIfAbsent` — and where its guard comes from: a
 * fresh look (`stat` then `readText`, `openFile`, or the parent's listing) or one it remembered
 * (its own last outcome, or an older look). Every mutation appends a unique line, so every state
 * of a file is unique; it prints, per outcome, a hash of the state it started from and of the one
 * it made.
 */
const DRAWN = `
const [moduleUrl, descriptorJson, id, sessions, raceMs, seed, canRemove, canCreate] = process.argv.slice(1)
const { createHash } = await import('node:crypto')
const mod = await import(moduleUrl)
const fs = await (mod.open ?? mod.default)(JSON.parse(descriptorJson))
const deadline = Date.now() + Number(raceMs)
const hash = (text) => createHash('sha256').update(text).digest('hex').slice(0, 24)
const done = [], lost = [], failed = []
const losses = {
  write: ['FS_STALE_VERSION'], bytes: ['FS_STALE_VERSION'], create: ['FS_NOT_OBSERVED'],
  edit: ['FS_STALE_VERSION', 'FS_NOT_FOUND', 'FS_EDIT_NOT_FOUND'], remove: ['FS_STALE_VERSION', 'FS_NOT_FOUND'],
}
function random(a) {
  return () => {
    a = (a + 0x6d2b79f5) | 0
    let t = Math.imul(a ^ (a >>> 15), 1 | a)
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296
  }
}
async function look(name, how) {
  const t = await fs.resolve(name)
  if (how === 'open') {
    let file
    try { file = await fs.openFile(t) } catch (err) { if (err?.code === 'FS_NOT_FOUND') return undefined; throw err }
    const parts = []
    for await (const chunk of file.chunks) parts.push(Buffer.from(chunk))
    await file.close()
    return { version: file.info.version, content: Buffer.concat(parts).toString('utf8') }
  }
  const entry = how === 'list' ? (await fs.listDir(await fs.resolve('.'))).find((e) => e.name === name) : undefined
  // A listing that names no version leaves it to stat.
  const version = entry?.version ?? (how === 'list' && entry === undefined ? undefined : (await fs.stat(t))?.version)
  if (version === undefined) return undefined
  // The version first: content read after it is as new or newer, so a guard on it is never too weak.
  try { return { version, content: await fs.readText(t) } } catch (err) { if (err?.code === 'FS_NOT_FOUND') return undefined; throw err }
}
async function session(s) {
  const draw = random(Number(seed) + Number(id.slice(1)) * 7919 + s * 104729)
  const pick = (xs) => xs[Math.floor(draw() * xs.length)]
  const memory = {}
  for (let i = 0; Date.now() < deadline; i++) {
    const f = Math.floor(draw() * 3)
    const name = 'm' + f + '.txt'
    const tag = id + '-' + s + '-' + i
    const from = draw() < 0.3 && memory[f] !== undefined ? 'remembered' : pick(['stat', 'open', 'list'])
    let op = pick(canRemove === '1' ? ['write', 'write', 'bytes', 'edit', 'edit', 'remove', 'create'] : ['write', 'write', 'bytes', 'edit', 'edit', 'create'])
    let base, next
    try {
      base = from === 'remembered' ? memory[f] : await look(name, from)
      if (base === undefined) {
        if (canCreate !== '1') continue
        op = 'create'
      }
      const t = await fs.resolve(name)
      const lastLine = base === undefined ? '' : base.content.slice(base.content.lastIndexOf('\\n', base.content.length - 2) + 1)
      next = op === 'create' ? 'FILE ' + f + '\\n' + tag + '\\n' : op === 'remove' ? undefined : base.content + tag + '\\n'
      const guard = { kind: 'replaceIfVersion', version: base?.version }
      let version
      if (op === 'write') version = (await fs.writeText(t, next, { expected: guard })).version
      else if (op === 'bytes') version = (await fs.writeBytes(t, Buffer.from(next), { expected: guard })).version
      else if (op === 'edit') version = (await fs.editText(t, { oldString: lastLine, newString: lastLine + tag + '\\n' }, { expected: { version: base.version } })).version
      else if (op === 'remove') await fs.remove(t, { expected: { version: base.version } })
      else version = (await (draw() < 0.5 ? fs.writeText(t, next, { expected: { kind: 'createIfAbsent' } }) : fs.writeBytes(t, Buffer.from(next), { expected: { kind: 'createIfAbsent' } }))).version
      memory[f] = next === undefined ? undefined : { version, content: next }
      done.push({ f, op, from, tag, base: op === 'create' ? null : hash(base.content), made: next === undefined ? null : hash(next) })
    } catch (err) {
      if (losses[op]?.includes(err?.code)) {
        // Once in a while the stale look stays remembered: a guard from an older look is drawn later.
        memory[f] = draw() < 0.5 ? base : undefined
        lost.push({ f, op, tag, made: next === undefined ? null : hash(next) })
      } else failed.push(tag + ' ' + op + ' (guard from ' + from + ') ' + (err?.code ?? '') + ' ' + (err?.message ?? String(err)))
    }
  }
}
await Promise.all(Array.from({ length: Number(sessions) }, (_, s) => session(s)))
await fs.close()
process.stdout.write(JSON.stringify({ done, lost, failed }) + '\\n', () => process.exit(0))
`

interface DrawnReport {
  readonly done: readonly { f: number; op: string; from: string; tag: string; base: string | null; made: string | null }[]
  readonly lost: readonly { f: number; op: string; tag: string; made: string | null }[]
  readonly failed: readonly string[]
}

interface RacerReport {
  readonly ok: readonly string[]
  readonly stale: readonly string[]
  readonly failed: readonly string[]
}

function runChild<T>(script: string, args: readonly string[], timeoutMs: number): Promise<T> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, ['--input-type=module', '-e', script, ...args], { stdio: ['ignore', 'pipe', 'pipe'] })
    let out = ''
    let err = ''
    child.stdout.on('data', (d: Buffer) => (out += d.toString()))
    child.stderr.on('data', (d: Buffer) => (err += d.toString()))
    const timer = setTimeout(() => child.kill('SIGKILL'), timeoutMs)
    child.on('error', reject)
    // 'close', not 'exit': the output is whole only once the pipes are closed.
    child.on('close', (code, signal) => {
      clearTimeout(timer)
      const last = out.trim().split('\n').pop() ?? ''
      if (code !== 0 || last === '') {
        reject(new Error(`a racing process ended with ${signal ?? `code ${String(code)}`}: ${err.slice(-2000)}`))
        return
      }
      try {
        resolve(JSON.parse(last) as T)
      } catch (parseError) {
        reject(new Error(`a racing process's report is not JSON (${String(parseError)}): ${last.slice(0, 200)}`))
      }
    })
  })
}

const stronger = (s: GuardStrength | undefined): boolean => s === 'atomic' || s === 'seamfs'

const hashText = (text: string): string => createHash('sha256').update(text).digest('hex').slice(0, 24)

/**
 * Whether the successful guarded mutations of one file form one history from its first state to its
 * last: every state (a content, or absence) a success started from was made by another success (or
 * was the first), none is the start of two successes (a lost update), and every state made but not
 * built on is the last. Each content is unique (every mutation adds its own line), so a state is
 * its hash. Returns what breaks it, in words.
 */
function checkChain(f: number, first: string | null, last: string | null, done: DrawnReport['done'], lost: DrawnReport['lost']): string[] {
  const problems: string[] = []
  const name = `m${f}.txt`
  const made = new Map<string, string>()
  if (first !== null) made.set(first, 'its first content')
  for (const d of done) if (d.made !== null) made.set(d.made, `${d.op} ${d.tag}`)
  const startedFrom = new Map<string, string[]>()
  for (const d of done) if (d.base !== null) startedFrom.set(d.base, [...(startedFrom.get(d.base) ?? []), `${d.op} ${d.tag} (guard from ${d.from})`])
  for (const [base, ops] of startedFrom) {
    if (ops.length > 1) problems.push(`${name}: ${ops.length} mutations succeeded from one version (a lost update): ${ops.join(', ')}`)
    if (!made.has(base)) problems.push(`${name}: ${ops.join(', ')} succeeded from a content no success made`)
  }
  const dangling = [...made.keys()].filter((state) => !startedFrom.has(state))
  const expectedDangling = last === null ? [] : [last]
  if (last !== null && !made.has(last)) problems.push(`${name}: its last content is one no success made`)
  for (const state of dangling)
    if (!expectedDangling.includes(state))
      problems.push(`${name}: the content made by ${made.get(state) ?? '?'} was replaced by no success, yet is not the last`)
  // Absence is made by each remove (and was the first state, if the file was missing), taken by each create.
  const removes = done.filter((d) => d.op === 'remove').length
  const creates = done.filter((d) => d.op === 'create').length
  const absences = removes + (first === null ? 1 : 0) - (last === null ? 1 : 0)
  if (creates !== absences) problems.push(`${name}: ${creates} creates succeeded where ${absences} absences were there to take (${removes} removes)`)
  const states = new Set([...made.keys(), ...startedFrom.keys(), ...(last === null ? [] : [last])])
  for (const l of lost) if (l.made !== null && states.has(l.made)) problems.push(`${name}: ${l.op} ${l.tag} was reported lost, yet its content landed`)
  return problems
}

export function crossProcessClauses(kit: Kit): void {
  const hook = kit.crossProcess
  const reason =
    hook === undefined
      ? 'no crossProcess hook (a module that opens the store in another process)'
      : !stronger(kit.caps.replaceIfVersion)
        ? `capabilities.replaceIfVersion is '${kit.caps.replaceIfVersion}': guards are not claimed across processes`
        : undefined
  kit.groupIf('cross-instance races', reason, () => {
    kit.test(
      `${PROCESSES} processes × ${SESSIONS} sessions of guarded writes and edits on shared files: every one reported successful is there once, none reported stale is, nothing torn`,
      async (env) => {
        const { module, descriptor } = hook!
        for (const name of FILES) await env.fs.writeText(await env.resolve(name), END)
        const args = (id: string): string[] => [module, JSON.stringify(descriptor(env.subject)), id, String(SESSIONS), String(RACE_MS), JSON.stringify(FILES)]
        const reports = await Promise.all(
          Array.from({ length: PROCESSES }, (_, p) => runChild<RacerReport>(RACER, args(`p${p}`), RACE_MS + kit.tuning.timeoutMs / 2)),
        )
        const lines = new Map<string, number>()
        for (const name of FILES) {
          const content = await env.fs.readText(await env.resolve(name))
          expect(content.endsWith(END), `${name} ends as every writer left it`).toBe(true)
          for (const line of content.split('\n').slice(0, -2)) lines.set(line, (lines.get(line) ?? 0) + 1)
        }
        const ok = reports.flatMap((r) => r.ok)
        const lost = ok.filter((line) => lines.get(line) !== 1)
        const staleLanded = reports.flatMap((r) => r.stale).filter((line) => lines.has(line))
        const failed = reports.flatMap((r) => r.failed)
        expect(ok.length, 'the racers made progress').toBeGreaterThan(PROCESSES)
        expect(lost, `writes reported successful but missing or doubled (of ${ok.length})`).toEqual([])
        expect(staleLanded, 'writes reported stale that landed').toEqual([])
        if (failed.length > 0) expect.fail(`no other failure under contention, yet:\n${failed.join('\n')}`)
      },
      RACE_MS + kit.tuning.timeoutMs,
    )
  })

  const removeStrength = kit.caps.removeIfVersion ?? kit.caps.replaceIfVersion
  kit.groupIf('cross-instance races', reason, () => {
    kit.test(
      `${PROCESSES} processes × ${SESSIONS} sessions of drawn guarded mutations from drawn guard sources (seed ${kit.tuning.modelSeed}): no state is the base of two successful ones, each is one a success made, none reported lost landed`,
      async (env) => {
        const { module, descriptor } = hook!
        // m0 and m1 exist, m2 does not: the first creates race too.
        const initial = ['FILE 0\n', 'FILE 1\n', undefined]
        for (const [f, content] of initial.entries()) if (content !== undefined) await env.fs.writeText(await env.resolve(`m${f}.txt`), content)
        const canRemove = kit.unmet({ caps: ['remove'] }) === undefined && stronger(removeStrength)
        const canCreate = stronger(kit.caps.createIfAbsent)
        const args = (p: number): string[] => [
          module,
          JSON.stringify(descriptor(env.subject)),
          `p${p}`,
          String(SESSIONS),
          String(DRAWN_MS),
          String(kit.tuning.modelSeed),
          canRemove ? '1' : '0',
          canCreate ? '1' : '0',
        ]
        const reports = await Promise.all(
          Array.from({ length: PROCESSES }, (_, p) => runChild<DrawnReport>(DRAWN, args(p), DRAWN_MS + kit.tuning.timeoutMs / 2)),
        )
        const failed = reports.flatMap((r) => r.failed)
        if (failed.length > 0) expect.fail(`no failure but a lost race, yet:\n${failed.join('\n')}`)
        const done = reports.flatMap((r) => r.done)
        expect(done.length, 'the racers made progress').toBeGreaterThan(PROCESSES)
        for (const [f, start] of initial.entries()) {
          const t = await env.resolve(`m${f}.txt`)
          const final = (await env.fs.stat(t)) === undefined ? null : hashText(await env.fs.readText(t))
          const mine = done.filter((d) => d.f === f)
          const problems = checkChain(
            f,
            start === undefined ? null : hashText(start),
            final,
            mine,
            reports.flatMap((r) => r.lost).filter((l) => l.f === f),
          )
          if (problems.length > 0) {
            const tally = [...new Set(mine.map((d) => d.op))].map((op) => `${mine.filter((d) => d.op === op).length} ${op}`).join(', ')
            expect.fail(`the history of m${f}.txt (successes: ${tally}):\n${problems.join('\n')}`)
          }
        }
      },
      DRAWN_MS + kit.tuning.timeoutMs,
    )
  })

  const mixedReason =
    hook === undefined
      ? 'no crossProcess hook (a module that opens the store in another process)'
      : (kit.unmet({ caps: ['rename', 'remove'] }) ??
        (stronger(removeStrength) && stronger(kit.caps.replaceIfVersion) ? undefined : `guards are '${removeStrength}': not claimed across processes`))
  kit.groupIf('cross-instance races: moves, deletes and edits of the same files', mixedReason, () => {
    kit.test(
      `${PROCESSES} processes × ${SESSIONS} sessions move, edit, delete and re-create the same 3 files: each is whole at exactly one name with every edit reported successful`,
      async (env) => {
        const { module, descriptor } = hook!
        const count = 3
        for (let f = 0; f < count; f++) await env.fs.writeText(await env.resolve(`f${f}.txt`), `FILE ${f}\n${END}`)
        const args = (id: string): string[] => [module, JSON.stringify(descriptor(env.subject)), id, String(SESSIONS), String(RACE_MS), String(count)]
        const reports = await Promise.all(
          Array.from({ length: PROCESSES }, (_, p) =>
            runChild<{ edits: Record<string, string[]>; created: string[]; failed: string[] }>(MIXER, args(`p${p}`), RACE_MS + kit.tuning.timeoutMs / 2),
          ),
        )
        expect(
          reports.flatMap((r) => r.failed),
          'no failure but a lost race',
        ).toEqual([])
        let edited = 0
        for (let f = 0; f < count; f++) {
          const held: string[] = []
          for (const name of [`f${f}.txt`, `f${f}.moved.txt`]) {
            const t = await env.resolve(name)
            if ((await env.fs.stat(t)) !== undefined) held.push(await env.fs.readText(t))
          }
          expect(held.length, `f${f} is at exactly one name`).toBe(1)
          const content = held[0] ?? ''
          expect(content.startsWith(`FILE ${f}\n`) && content.endsWith(END), `f${f} is whole`).toBe(true)
          const lines = content.split('\n')
          const reported = reports.flatMap((r) => r.edits[f] ?? [])
          edited += reported.length
          expect(
            reported.filter((tag) => lines.filter((l) => l === tag).length !== 1),
            `f${f}: edits reported successful but missing`,
          ).toEqual([])
          const g = await env.resolve(`g${f}.txt`)
          if ((await env.fs.stat(g)) !== undefined) {
            const created = new Set(reports.flatMap((r) => r.created).map((tag) => `G ${tag}\n`.repeat(50)))
            expect(created.has(await env.fs.readText(g)), `g${f} holds one whole created content`).toBe(true)
          }
        }
        expect(edited, 'the racers made progress').toBeGreaterThan(PROCESSES)
      },
      RACE_MS + kit.tuning.timeoutMs,
    )
  })

  const moveReason =
    hook === undefined
      ? 'no crossProcess hook (a module that opens the store in another process)'
      : (kit.unmet({ caps: ['rename'] }) ??
        (stronger(removeStrength) ? undefined : `the guards of remove and rename are '${removeStrength}': not claimed across processes`))
  kit.groupIf('cross-instance races: moves', moveReason, () => {
    kit.test(
      `${PROCESSES} processes move one file under one version at once, ${MOVE_ROUNDS} times: exactly one moves it, the others are told it is gone or changed, and it is whole at exactly one name`,
      async (env: Env) => {
        const { module, descriptor } = hook!
        // One file per round, laid first: the processes start once and race each round at its own time.
        const contents = Array.from({ length: MOVE_ROUNDS }, (_, round) => `round ${round}\n`.repeat(100))
        const versions: string[] = []
        for (const [round, content] of contents.entries()) versions.push((await env.fs.writeText(await env.resolve(`moved-${round}.txt`), content)).version)
        const startAt = Date.now() + 1500
        const reports = await Promise.all(
          Array.from({ length: PROCESSES }, (_, p) =>
            runChild<{ outcomes: string[] }>(
              MOVER,
              [module, JSON.stringify(descriptor(env.subject)), String(p), String(startAt), String(ROUND_GAP_MS), JSON.stringify(versions)],
              kit.tuning.timeoutMs + MOVE_ROUNDS * ROUND_GAP_MS,
            ),
          ),
        )
        for (const [round, content] of contents.entries()) {
          const codes = reports.map((r) => r.outcomes[round] ?? 'no outcome')
          expect(
            codes.filter((c) => c === 'ok'),
            `round ${round}: ${codes.join(', ')}`,
          ).toHaveLength(1)
          for (const c of codes) if (c !== 'ok') expect(['FS_NOT_FOUND', 'FS_STALE_VERSION'], `round ${round}`).toContain(c)
          const names = [`moved-${round}.txt`, ...Array.from({ length: PROCESSES }, (_, p) => `moved-${round}-${p}.txt`)]
          const holding: string[] = []
          for (const name of names) {
            const t = await env.resolve(name)
            if ((await env.fs.stat(t)) === undefined) continue
            expect(await env.fs.readText(t), `${name} is whole`).toBe(content)
            holding.push(name)
          }
          expect(holding, `round ${round}: the file is at exactly one name`).toHaveLength(1)
        }
      },
      kit.tuning.timeoutMs * 3,
    )
  })
}

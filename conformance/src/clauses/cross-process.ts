import { spawn } from 'node:child_process'
import { expect } from 'vitest'
import type { GuardStrength } from '@seamfs/core'
import type { Env, Kit } from '../kit.js'

/** Processes, sessions each, and how long they race (ms): bounded, they stop by themselves. */
const PROCESSES = 3
const SESSIONS = 3
const RACE_MS = 2500
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
        expect(failed.join('\n'), 'no other failure under contention').toBe('')
      },
      RACE_MS + kit.tuning.timeoutMs,
    )
  })

  const removeStrength = kit.caps.removeIfVersion ?? kit.caps.replaceIfVersion
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

/**
 * MemoryFileSystem against raw memfs `Volume` calls, same jobs, same run.
 *
 * Jobs: 10,000 files of 200 B (in 100 directories) are created, read, then
 * edited once each (a unique marker replaced). Raw baselines: `writeFileSync`
 * (parents made once, untimed), `readFileSync(utf8)`, and for an edit
 * `readFileSync(utf8)` + an exactly-once `indexOf` check + splice +
 * `writeFileSync`. Library side: `writeText` / `readText` / `editText`, each
 * after `resolve(path)`, which is counted as library cost.
 *
 * A total row sums the three jobs: the memory backend's goal is the whole
 * of write + read + edit at ≤ 0.30× the raw Volume's.
 *
 * A second table breaks one operation down, to show where the time goes:
 * the same 200 B write or read through memfs's lower layer (the Superblock
 * behind `Volume`, no Node-style argument handling), the raw Volume call, the
 * library's `resolve` alone, the library call on a pre-resolved target, and
 * the same library calls over a plain `Map` (a backend that stores nothing but
 * a reference: what core's own per-call work costs, the floor of any backend).
 *
 * Method: warm-up, then raw and library repetitions alternate; medians of the
 * per-op time of each repetition.  Usage: node bench/dist/memory.js [--quick] [--json FILE]
 */
import { writeFileSync } from 'node:fs'
import { availableParallelism, cpus } from 'node:os'
import { performance } from 'node:perf_hooks'
import { parseArgs } from 'node:util'
import { Volume } from 'memfs'
import type { FsTarget } from '@seamfs/core'
import { FileSystem, FsVersion, type FsCapabilities, type FsDirEntry, type FsInfo, type UpdateRequest, type WriteResult } from '@seamfs/core/backend'
import { MemoryFileSystem } from '@seamfs/backend-memory'

const { values: args } = parseArgs({ options: { quick: { type: 'boolean', default: false }, json: { type: 'string' } } })
const FILES = args.quick === true ? 1_000 : 10_000
const REPS = args.quick === true ? 3 : 9
const TARGET = 1.5
/** The goal of the three jobs together: seamfs at ≤ 0.30× raw memfs. */
const TOTAL_TARGET = 0.3

const paths = Array.from({ length: FILES }, (_, i) => `/p/d${String(i % 100).padStart(2, '0')}/f${String(i).padStart(5, '0')}.txt`)
const dirs = [...new Set(paths.map((p) => p.slice(0, p.lastIndexOf('/'))))]
const contentOf = (i: number): string => `marker-${String(i).padStart(5, '0')} `.padEnd(200, 'lorem ipsum dolor sit amet ')

function median(values: readonly number[]): number {
  const sorted = [...values].sort((a, b) => a - b)
  const mid = Math.floor(sorted.length / 2)
  return sorted.length % 2 === 1 ? (sorted[mid] as number) : ((sorted[mid - 1] as number) + (sorted[mid] as number)) / 2
}

async function timed(body: () => Promise<void> | void): Promise<number> {
  const started = performance.now()
  await body()
  return ((performance.now() - started) * 1000) / FILES
}

function freshVolume(seed: boolean): Volume {
  const vol = new Volume()
  for (const dir of dirs) vol.mkdirSync(dir, { recursive: true })
  if (seed) paths.forEach((p, i) => vol.writeFileSync(p, contentOf(i)))
  return vol
}

/**
 * Core over a `Map`: each hook is one map operation (reads still copy, as the
 * contract asks). No backend can be faster than this through the public API.
 */
class MapFileSystem extends FileSystem {
  override readonly capabilities: FsCapabilities = {
    symlinks: false,
    permissions: false,
    processPath: false,
    createIfAbsent: 'atomic',
    replaceIfVersion: 'atomic',
    versionSource: 'generation',
    newlineInNames: true,
    emptyDirectories: false,
  }
  readonly #files = new Map<string, { bytes: Uint8Array; version: FsVersion }>()
  #generation = 0
  override fileUrl(target: FsTarget): string {
    return `map://${target.targetKey}`
  }
  override contains(parent: FsTarget, child: FsTarget): boolean {
    return child.targetKey.startsWith(parent.targetKey)
  }
  protected override async resolvePath(path: string): Promise<FsTarget> {
    return { targetKey: path as FsTarget['targetKey'], displayPath: path }
  }
  protected override async statTarget(target: FsTarget): Promise<FsInfo | undefined> {
    const file = this.#files.get(target.targetKey)
    return file && { type: 'file', version: file.version, size: file.bytes.length }
  }
  protected override async lstatPath(path: string): Promise<FsInfo | undefined> {
    return this.statTarget({ targetKey: path as FsTarget['targetKey'], displayPath: path })
  }
  protected override async loadBytes(target: FsTarget): Promise<Uint8Array> {
    return (this.#files.get(target.targetKey) as { bytes: Uint8Array }).bytes.slice()
  }
  protected override async openBytes(target: FsTarget): Promise<Iterable<Uint8Array>> {
    return [await this.loadBytes(target)]
  }
  protected override async listEntries(): Promise<FsDirEntry[]> {
    return []
  }
  protected override async publishBytes(target: FsTarget, bytes: Uint8Array): Promise<WriteResult> {
    const before = this.#files.get(target.targetKey)
    const version = FsVersion(String(++this.#generation))
    this.#files.set(target.targetKey, { bytes, version })
    return { created: before === undefined, version, before: before?.bytes ?? null }
  }
  protected override async updateBytes(target: FsTarget, _request: UpdateRequest, transform: (bytes: Uint8Array) => Uint8Array): Promise<FsVersion> {
    const file = this.#files.get(target.targetKey) as { bytes: Uint8Array; version: FsVersion }
    file.bytes = transform(file.bytes)
    file.version = FsVersion(String(++this.#generation))
    return file.version
  }
}

function freshMemory(seed: boolean): MemoryFileSystem {
  const fs = new MemoryFileSystem()
  for (const dir of dirs) fs.volume.mkdirSync(dir, { recursive: true })
  if (seed) paths.forEach((p, i) => fs.volume.writeFileSync(p, contentOf(i)))
  return fs
}

const raw = {
  write: (vol: Volume) => paths.forEach((p, i) => vol.writeFileSync(p, contentOf(i))),
  read: (vol: Volume) => paths.forEach((p) => vol.readFileSync(p, 'utf8')),
  edit: (vol: Volume) =>
    paths.forEach((p, i) => {
      const text = vol.readFileSync(p, 'utf8') as string
      const marker = `marker-${String(i).padStart(5, '0')}`
      const at = text.indexOf(marker)
      if (at === -1 || text.indexOf(marker, at + marker.length) !== -1) throw new Error('marker not unique')
      vol.writeFileSync(p, text.slice(0, at) + `edited-${i}` + text.slice(at + marker.length))
    }),
}

const lib = {
  write: async (fs: FileSystem) => {
    for (let i = 0; i < FILES; i++) await fs.writeText(await fs.resolve(paths[i] as string), contentOf(i))
  },
  read: async (fs: FileSystem) => {
    for (const p of paths) await fs.readText(await fs.resolve(p))
  },
  edit: async (fs: FileSystem) => {
    for (let i = 0; i < FILES; i++) {
      const edit = { oldString: `marker-${String(i).padStart(5, '0')}`, newString: `edited-${i}`, replaceAll: false }
      await fs.editText(await fs.resolve(paths[i] as string), edit)
    }
  },
}

interface Row {
  readonly job: string
  readonly rawUs: number
  readonly libUs: number
  readonly ratio: number
  readonly ok: boolean
}

const rows: Row[] = []
for (const job of ['write', 'read', 'edit'] as const) {
  const rawTimes: number[] = []
  const libTimes: number[] = []
  for (let rep = 0; rep <= REPS; rep++) {
    const vol = freshVolume(job !== 'write')
    const fs = freshMemory(job !== 'write')
    const r = await timed(() => raw[job](vol))
    const l = await timed(() => lib[job](fs))
    if (rep === 0) continue // warm-up
    rawTimes.push(r)
    libTimes.push(l)
  }
  const rawUs = median(rawTimes)
  const libUs = median(libTimes)
  rows.push({ job: `${job} ${FILES} × 200 B`, rawUs, libUs, ratio: libUs / rawUs, ok: libUs / rawUs <= TARGET })
}
{
  const rawUs = rows.reduce((sum, r) => sum + r.rawUs, 0)
  const libUs = rows.reduce((sum, r) => sum + r.libUs, 0)
  rows.push({ job: 'write + read + edit', rawUs, libUs, ratio: libUs / rawUs, ok: libUs / rawUs <= TOTAL_TARGET })
}

// Where the time goes: one kind of operation through each layer.
const layers: Array<{ layer: string; write: number; read: number; edit: number }> = []
{
  // `setup` runs untimed before each repetition (an edit needs its markers back).
  const measure = async (body: () => Promise<void> | void, setup?: () => Promise<void> | void): Promise<number> => {
    const times: number[] = []
    for (let rep = 0; rep <= REPS; rep++) {
      await setup?.()
      const t = await timed(body)
      if (rep > 0) times.push(t)
    }
    return median(times)
  }
  const vol = freshVolume(true)
  const core = vol._core
  const buffers = paths.map((_, i) => Buffer.from(contentOf(i)))
  const O_WRONLY_CREAT_TRUNC = 0o1 | 0o100 | 0o1000
  layers.push({
    layer: 'memfs Superblock (lower layer)',
    write: await measure(() => paths.forEach((p, i) => core.writeFile(p, buffers[i] as Buffer, O_WRONLY_CREAT_TRUNC, 0o644))),
    read: await measure(() => paths.forEach((p) => core.getResolvedLinkOrThrow(p).getNode().getString())),
    edit: Number.NaN,
  })
  const seed = (): void => paths.forEach((p, i) => vol.writeFileSync(p, contentOf(i)))
  layers.push({
    layer: 'memfs Volume (Node API)',
    write: await measure(() => raw.write(vol)),
    read: await measure(() => raw.read(vol)),
    edit: await measure(() => raw.edit(vol), seed),
  })
  const fs = freshMemory(true)
  const targets: FsTarget[] = []
  layers.push({
    layer: 'seamfs resolve() alone',
    write: await measure(async () => {
      targets.length = 0
      for (const p of paths) targets.push(await fs.resolve(p))
    }),
    read: Number.NaN,
    edit: Number.NaN,
  })
  layers.push({
    layer: 'seamfs on a pre-resolved target',
    write: await measure(async () => {
      for (let i = 0; i < FILES; i++) await fs.writeText(targets[i] as FsTarget, contentOf(i))
    }),
    read: await measure(async () => {
      for (const t of targets) await fs.readText(t)
    }),
    edit: Number.NaN,
  })
  const reseed = (): void => paths.forEach((p, i) => fs.volume.writeFileSync(p, contentOf(i)))
  layers.push({
    layer: 'seamfs resolve() + call',
    write: await measure(() => lib.write(fs)),
    read: await measure(() => lib.read(fs)),
    edit: await measure(() => lib.edit(fs), reseed),
  })
  const map = new MapFileSystem()
  const remap = (): Promise<void> => lib.write(map)
  layers.push({
    layer: 'core over a Map (no store: the floor)',
    write: await measure(() => lib.write(map)),
    read: await measure(() => lib.read(map)),
    edit: await measure(() => lib.edit(map), remap),
  })
}

const fmt = (n: number): string => (Number.isNaN(n) ? '–' : n.toFixed(2))
console.log(`node ${process.version} · ${availableParallelism()} CPUs (${cpus()[0]?.model ?? 'unknown'}) · ${FILES} files · ${REPS} reps`)
console.log('')
console.log('| job | raw Volume median (µs/op) | seamfs median (µs/op) | ratio | target | ok |')
console.log('|---|---|---|---|---|---|')
for (const r of rows) {
  const target = r === rows[rows.length - 1] ? TOTAL_TARGET : TARGET
  console.log(`| ${r.job} | ${fmt(r.rawUs)} | ${fmt(r.libUs)} | ${r.ratio.toFixed(2)}× | ≤ ${target}× | ${r.ok ? 'yes' : 'NO'} |`)
}
console.log('')
console.log('where the time goes (µs per 200 B operation, medians):')
console.log('')
console.log('| layer | write | read | edit |')
console.log('|---|---|---|---|')
for (const l of layers) console.log(`| ${l.layer} | ${fmt(l.write)} | ${fmt(l.read)} | ${fmt(l.edit)} |`)
if (args.json !== undefined) writeFileSync(args.json, `${JSON.stringify({ files: FILES, reps: REPS, rows, layers }, null, 2)}\n`)

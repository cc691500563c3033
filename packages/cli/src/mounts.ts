/**
 * The config's `mounts`: each backend opened as `backend` would be, then one
 * `MountFileSystem` over them (a tree whose `/` is the `/` mount). The host
 * files the harness protects are named in that tree, through every mount whose
 * store is this machine's disk. A read-only mount that a writable one reaches
 * (their stores overlap) is refused, or warned of where it cannot be told.
 */
import { realpathSync } from 'node:fs'
import { basename, dirname, join, posix } from 'node:path'
import { MountFileSystem, type FileSystem, type MountEntry } from '@seamfs/core'
import { compareNames, ConfigError, Found, type ConfigEnv } from '@seamfs/core/backend'
import { mountKey, type BackendConfig, type MountsConfig } from './config.js'

/** A mount point and what is mounted there, opened. */
interface OpenMount {
  readonly point: string
  readonly backend: BackendConfig
  readonly fs: FileSystem
  readonly readOnly: boolean
}

export interface OpenMountsOptions {
  readonly baseDir: string
  readonly env: ConfigEnv
  /** Files of this machine (absolute) the model must not change. */
  readonly hostFiles: readonly string[]
  /** Opens one backend; `where` names its config in errors. */
  readonly open: (b: BackendConfig, baseDir: string, env: ConfigEnv, where: string) => Promise<FileSystem>
}

/** The mount points of `mounts` in code-point order, each with its backend config and `readOnly`. */
function entries(mounts: MountsConfig): Array<{ point: string; backend: BackendConfig; readOnly: boolean }> {
  return Object.keys(mounts)
    .sort(compareNames)
    .map((point) => {
      const { readOnly, ...backend } = mounts[point] as BackendConfig & { readOnly?: boolean }
      return { point, backend, readOnly: readOnly === true }
    })
}

/** What {@link openMounts} opened: the tree, the host files as its paths, and warnings for people. */
export interface OpenedMounts {
  readonly fs: MountFileSystem
  readonly protectedPaths: string[]
  /** Read-only mounts a writable mount may reach (see {@link checkOverlaps}), one sentence each. */
  readonly warnings: string[]
}

/**
 * Opens every mount (in code-point order of the points; a failure closes those already open) and
 * composes them. `protectedPaths` are `hostFiles` as paths of the tree. A read-only mount that a
 * writable mount certainly reaches is a ConfigError (see {@link checkOverlaps}).
 */
export async function openMounts(mounts: MountsConfig, options: OpenMountsOptions): Promise<OpenedMounts> {
  const opened: OpenMount[] = []
  try {
    for (const { point, backend, readOnly } of entries(mounts)) {
      opened.push({ point, backend, readOnly, fs: await options.open(backend, options.baseDir, options.env, mountKey(point)) })
    }
    const fs = new MountFileSystem(Object.fromEntries(opened.map((m) => [m.point, { fs: m.fs, readOnly: m.readOnly }])))
    const warnings = await checkOverlaps(fs, opened)
    return { fs, protectedPaths: await inTree(options.hostFiles, opened), warnings }
  } catch (err) {
    await Promise.allSettled(opened.map((m) => m.fs.close()))
    throw err
  }
}

/** Backend types whose stores are a machine's files (an SFTP server may be this machine, or another mount's server under a second name). */
const MACHINE_FILES: ReadonlySet<string> = new Set(['local', 'module', 'sftp'])

/**
 * A read-only mount must not be editable through a writable one whose store overlaps it (a `/` mount
 * of a directory and a read-only `/docs` mount of its `docs`: a link, or another spelling, under `/`
 * reaches the docs). `MountFileSystem.overlaps` finds the pairs: a `certain` one (two mounts of this
 * machine's disk) is a ConfigError naming both; a `possible` one (two mounts of one server or bucket,
 * or an SFTP mount beside a local one or another server's, whose paths nest) is returned as a warning.
 */
async function checkOverlaps(fs: MountFileSystem, opened: readonly OpenMount[]): Promise<string[]> {
  const typeAt = (m: MountEntry): string | undefined => opened.find((o) => o.point === m.point)?.backend.type
  const mayShare = (a: MountEntry, b: MountEntry): boolean => {
    const types = [typeAt(a), typeAt(b)]
    return types.includes('sftp') && types.every((t) => t !== undefined && MACHINE_FILES.has(t))
  }
  const warnings: string[] = []
  for (const o of await fs.overlaps({ mayShare })) {
    const how =
      o.reach === 'holds'
        ? `holding it (${o.writableRoot} holds ${o.readOnlyRoot})`
        : `inside it, mounted elsewhere than where "${o.readOnly}" shows that directory (${o.readOnlyRoot} holds ${o.writableRoot})`
    if (o.certainty === 'certain') {
      const expected =
        'a read-only mount that no writable mount reaches (mount stores beside each other, or a writable part exactly where the read-only mount shows it)'
      throw new ConfigError(mountKey(o.readOnly), expected, new Found(`the writable mount "${o.writable}" ${how}`))
    }
    warnings.push(
      `${mountKey(o.readOnly)} (read-only) and ${mountKey(o.writable)} may be one store, the writable one ${how}: if they are, the read-only files can be edited through "${o.writable}"`,
    )
  }
  return warnings
}

/** `mounts / (memory), /docs (local disk at /abs/docs, read-only)`: each backend as `describe` says (never a secret). */
export async function describeMounts(mounts: MountsConfig, describe: (b: BackendConfig) => Promise<string>): Promise<string> {
  const parts = await Promise.all(entries(mounts).map(async (m) => `${m.point} (${await describe(m.backend)}${m.readOnly ? ', read-only' : ''})`))
  return `mounts ${parts.join(', ')}`
}

/** `path` with its longest existing ancestor's symlinks resolved (the rest kept as written). */
function realNearest(path: string): string {
  let tail = ''
  for (let dir = path; ; dir = dirname(dir)) {
    try {
      return tail === '' ? realpathSync.native(dir) : join(realpathSync.native(dir), tail)
    } catch {
      if (dirname(dir) === dir) return path
      tail = tail === '' ? basename(dir) : join(basename(dir), tail)
    }
  }
}

/** `file` as a path below `point`, when it lies at or below `root`. */
function below(root: string, file: string, point: string): string | undefined {
  const rel = posix.relative(root, file)
  if (rel === '') return point
  if (rel === '..' || rel.startsWith('../') || posix.isAbsolute(rel)) return undefined
  return posix.join(point, rel)
}

/**
 * Host files as paths of the tree: through every mount whose store is this machine's disk (local,
 * or a module's) and whose root holds them, as written and with symlinks resolved. A file reachable
 * through two mounts is protected under both points; one under no mount's root is not reachable by
 * a path of the tree.
 */
async function inTree(files: readonly string[], mounts: readonly OpenMount[]): Promise<string[]> {
  const paths = new Set<string>()
  for (const m of mounts) {
    if (m.backend.type !== 'local' && m.backend.type !== 'module') continue
    let root: string
    try {
      root = (await m.fs.resolve('.')).displayPath
    } catch {
      continue
    }
    const realRoot = realNearest(root)
    for (const file of files) {
      for (const path of [below(root, file, m.point), below(realRoot, realNearest(file), m.point)]) if (path !== undefined) paths.add(path)
    }
  }
  return [...paths]
}

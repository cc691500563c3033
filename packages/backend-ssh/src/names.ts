import { createHash, randomBytes } from 'node:crypto'
import { pidIsAlive, processWide, THIS_HOST } from '@seamfs/core/backend'

/**
 * The names seamfs reserves in a directory of the store, and who owns them:
 * - `.seamfs-tmp-<host>-<pid>-<16 hex>`: a write's staging directory (its temp file inside has the
 *   same name), a remove's or move's empty stage, or a lock entry set aside while it is taken over;
 *   `<host>` is 8 hex of a hash of {@link THIS_HOST} (machine, boot, pid namespace) and `<pid>` the
 *   process that made it, so a later writer on the same machine tells a dead owner at once;
 * - `.seamfs-tmp-<16 hex>`: the same, made by an older version (owner unknown: judged by age only);
 * - `.seamfs-lock-<24 hex>`: the lock entry of the target whose name hashes to it (leases.ts).
 *
 * Listings hide them, writes refuse them as targets, and sweeps remove only entries matching
 * these patterns (and only when their owner is provably gone).
 */

/** This machine's part of a stage name: 8 hex of a hash of {@link THIS_HOST}. */
export const HOST_ID = createHash('sha256').update(THIS_HOST).digest('hex').slice(0, 8)

const TEMP_NAME = /^\.seamfs-tmp-(?:[0-9a-f]{16}|([0-9a-f]{8})-(\d{1,10})-[0-9a-f]{16})$/
const LOCK_NAME = /^\.seamfs-lock-[0-9a-f]{24}$/
/** The entry a stage's keeper makes and removes at once inside a stage, to mark it fresh (sweep.ts). */
export const KEEP_NAME = '.seamfs-keep'

/** The names of the stages this process made and still uses (every copy of this package in the process). */
const live: Set<string> = processWide('backend-ssh:live-stages', () => new Set<string>())

/** A fresh stage name of this process (`.seamfs-tmp-<host>-<pid>-<16 hex>`), counted live until {@link release}d. */
export function tempName(): string {
  const name = `.seamfs-tmp-${HOST_ID}-${process.pid}-${randomBytes(8).toString('hex')}`
  live.add(name)
  return name
}

/** Marks a stage name of this process as no longer in use: a sweep may remove what is left of it. */
export function release(name: string): void {
  live.delete(name)
}

/** True for the name of a stage or temp file (this version's or an older one's); listings never show these. */
export function isTempName(name: string): boolean {
  return TEMP_NAME.test(name)
}

/** True for the name of a lock entry. */
export function isLockName(name: string): boolean {
  return LOCK_NAME.test(name)
}

/** True for any name seamfs reserves: stages, temp files and lock entries. */
export function isReservedName(name: string): boolean {
  return isTempName(name) || isLockName(name)
}

/** The lock entry's name for a target named `name`: `.seamfs-lock-<first 24 hex of sha256(name)>`. */
export function lockName(name: string): string {
  return `.seamfs-lock-${createHash('sha256').update(name).digest('hex').slice(0, 24)}`
}

/**
 * Whether the owner of the stage `name` is provably gone, as this process can tell without I/O:
 * `gone` for a stage of this machine whose process is dead, or of this process but no longer in
 * use; `alive` for one of this process in use; `unknown` otherwise (another machine, a live pid,
 * an older name): then only its age can tell.
 */
export function ownerState(name: string): 'gone' | 'alive' | 'unknown' {
  const m = TEMP_NAME.exec(name)
  if (m === null || m[1] !== HOST_ID) return 'unknown'
  const pid = Number(m[2])
  if (pid === process.pid) return live.has(name) ? 'alive' : 'gone'
  return pidIsAlive(pid) ? 'unknown' : 'gone'
}

/** True for a stage name of the older format (no owner in it): judged by a longer age. */
export function isOldTempName(name: string): boolean {
  const m = TEMP_NAME.exec(name)
  return m !== null && m[1] === undefined
}

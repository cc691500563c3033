import { FsError } from './errors.js'
import { FsVersion, type FsTarget, type FsWriteIntent } from './types.js'

/** What an owner knows of one target: it saw it absent, or present at a version. Unseen = no entry. */
export type Observation = { readonly kind: 'absent' } | { readonly kind: 'present'; readonly version: FsVersion }

/**
 * Whose observations these are: a session object (held weakly) or a session
 * id. `undefined` stands for an actor with no session: it can create new
 * files, but never overwrite or edit one.
 */
export type PolicyOwner = object | string

/** One owner's record in a JSON-safe form, for persisting a session and restoring it later. */
export interface ObservationSnapshot {
  readonly format: 'seamfs.observations/1'
  readonly entries: ReadonlyArray<readonly [targetKey: string, observation: Observation]>
}

const SNAPSHOT_FORMAT = 'seamfs.observations/1'

/**
 * The read-before-write rules, with no I/O and no event framework. The tools
 * ask it for the guard of each mutation and tell it what each call observed;
 * the backend compares versions inside its own critical section, so there is
 * no check-then-act window here.
 *
 * Rules, per owner and target:
 * - write → `replaceIfVersion` when present, else `createIfAbsent` (a blind
 *   overwrite of an existing file then fails `FS_NOT_OBSERVED`; a new file needs no read);
 * - edit → `FS_NOT_OBSERVED` when unseen, `FS_NOT_FOUND` when absent, the recorded version when present;
 * - remove of a file → the same as edit: a blind remove is refused like a blind overwrite, a stale one fails in the store;
 * - rename → the source as for edit; the destination as for write (`overwrite: { version }` when present,
 *   else no overwrite, so an existing unseen destination fails `FS_NOT_OBSERVED`);
 * - a successful read, write or edit records the version it saw or produced;
 *   a read that finds nothing records absent; listings and failed reads record nothing;
 * - a successful remove records the target absent; a rename records the source absent and the destination present;
 * - owners are isolated; `forget` drops one owner; `snapshot`/`restore` carry one owner's record across a restart.
 */
export class ObservationPolicy {
  readonly #byObject = new WeakMap<object, Map<string, Observation>>()
  readonly #byId = new Map<string, Map<string, Observation>>()

  /** The guard for a write of `target` by `owner`. */
  writeIntent(owner: PolicyOwner | undefined, target: FsTarget): FsWriteIntent {
    const seen = this.observation(owner, target)
    return seen?.kind === 'present' ? { kind: 'replaceIfVersion', version: seen.version } : { kind: 'createIfAbsent' }
  }

  /** The guard for an edit of `target` by `owner`; throws when the owner may not edit it. */
  editIntent(owner: PolicyOwner | undefined, target: FsTarget): { readonly version: FsVersion } {
    return this.#seenPresent(owner, target, 'edit')
  }

  #seenPresent(owner: PolicyOwner | undefined, target: FsTarget, verb: 'edit' | 'remove' | 'move'): { readonly version: FsVersion } {
    const seen = this.observation(owner, target)
    if (seen === undefined) throw FsError.unseen(verb, target.displayPath)
    if (seen.kind === 'absent') {
      const path = target.displayPath
      throw new FsError('FS_NOT_FOUND', `cannot ${verb} "${path}": not found`, { verb: verb === 'move' ? 'rename' : verb, path })
    }
    return { version: seen.version }
  }

  /** The guard for a remove of the file `target` by `owner`; throws when the owner may not remove it. */
  removeIntent(owner: PolicyOwner | undefined, target: FsTarget): { readonly version: FsVersion } {
    return this.#seenPresent(owner, target, 'remove')
  }

  /** The guards of a move of the file `from` to `to` by `owner`; throws when the owner may not move it. */
  renameIntent(
    owner: PolicyOwner | undefined,
    from: FsTarget,
    to: FsTarget,
  ): { readonly expected: { readonly version: FsVersion }; readonly overwrite: false | { readonly version: FsVersion } } {
    const expected = this.#seenPresent(owner, from, 'move')
    const seen = this.observation(owner, to)
    return { expected, overwrite: seen?.kind === 'present' ? { version: seen.version } : false }
  }

  /** Records what a successful move did: `from` is gone, `to` holds `version`. */
  recordRenamed(owner: PolicyOwner | undefined, from: FsTarget, to: FsTarget, version: FsVersion): void {
    this.recordAbsent(owner, from)
    this.recordPresent(owner, to, version)
  }

  /** Records that `owner` saw `target` at `version` (after a read, write or edit that succeeded). */
  recordPresent(owner: PolicyOwner | undefined, target: FsTarget, version: FsVersion): void {
    this.#record(owner, target, { kind: 'present', version })
  }

  /** Records that `owner` looked for `target` and found nothing. */
  recordAbsent(owner: PolicyOwner | undefined, target: FsTarget): void {
    this.#record(owner, target, { kind: 'absent' })
  }

  /** What `owner` knows of `target`; `undefined` when unseen (or when there is no owner). */
  observation(owner: PolicyOwner | undefined, target: FsTarget): Observation | undefined {
    return owner === undefined ? undefined : this.#table(owner, false)?.get(target.targetKey)
  }

  /** Drops everything `owner` observed. */
  forget(owner: PolicyOwner): void {
    if (typeof owner === 'string') this.#byId.delete(owner)
    else this.#byObject.delete(owner)
  }

  /** `owner`'s record, JSON-safe, to persist with a session. */
  snapshot(owner: PolicyOwner): ObservationSnapshot {
    return { format: SNAPSHOT_FORMAT, entries: [...(this.#table(owner, false) ?? new Map<string, Observation>())] }
  }

  /**
   * Replaces `owner`'s record with a snapshot taken earlier (by any instance).
   * A malformed snapshot throws a `TypeError` and changes nothing.
   */
  restore(owner: PolicyOwner, snapshot: unknown): void {
    const table = new Map<string, Observation>()
    const s = snapshot as Partial<ObservationSnapshot> | null
    if (typeof s !== 'object' || s === null || s.format !== SNAPSHOT_FORMAT || !Array.isArray(s.entries)) {
      throw new TypeError(`not an observation snapshot (format ${SNAPSHOT_FORMAT})`)
    }
    for (const entry of s.entries as unknown[]) {
      const [key, obs] = Array.isArray(entry) ? (entry as unknown[]) : []
      const o = obs as { kind?: unknown; version?: unknown } | undefined
      if (typeof key !== 'string' || typeof o !== 'object' || o === null) throw new TypeError('malformed observation entry')
      if (o.kind === 'absent') table.set(key, { kind: 'absent' })
      else if (o.kind === 'present' && typeof o.version === 'string') table.set(key, { kind: 'present', version: FsVersion(o.version) })
      else throw new TypeError(`malformed observation of "${key}"`)
    }
    if (typeof owner === 'string') this.#byId.set(owner, table)
    else this.#byObject.set(owner, table)
  }

  #record(owner: PolicyOwner | undefined, target: FsTarget, observation: Observation): void {
    if (owner === undefined) return
    this.#table(owner, true)?.set(target.targetKey, observation)
  }

  #table(owner: PolicyOwner, create: boolean): Map<string, Observation> | undefined {
    let table = typeof owner === 'string' ? this.#byId.get(owner) : this.#byObject.get(owner)
    if (table === undefined && create) {
      table = new Map()
      if (typeof owner === 'string') this.#byId.set(owner, table)
      else this.#byObject.set(owner, table)
    }
    return table
  }
}

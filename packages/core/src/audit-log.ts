import { closeSync, existsSync, fstatSync, openSync, readSync, renameSync, rmSync, writeSync } from 'node:fs'
import type { FsEvent, FsEventListener } from './events.js'

/** Options of {@link AuditLog}. */
export interface AuditLogOptions {
  /** Rotate before the file would grow past this many bytes (default 64 MiB, at least 4 KiB). */
  readonly maxBytes?: number | undefined
  /** Rotated files kept beside it (`<path>.1` newest … `<path>.<keep>`; default 3, 0 keeps none). */
  readonly keep?: number | undefined
}

/** The files of an audit log: `path`, then those a rotation makes (`<path>.1` … `<path>.<keep>`): protect them all. */
export function auditLogFiles(path: string, keep = AUDIT_LOG_KEEP): string[] {
  return [path, ...Array.from({ length: keep }, (_, i) => `${path}.${i + 1}`)]
}

/** The default {@link AuditLogOptions.keep}: 3. */
export const AUDIT_LOG_KEEP = 3

/** The default {@link AuditLogOptions.maxBytes}: 64 MiB. */
export const AUDIT_LOG_MAX_BYTES = 64 * 1024 * 1024

/** How far back from the end a reopened log is read for its last sequence number. */
const TAIL_BYTES = 64 * 1024

/** One line of the audit log, as JSON. */
export interface AuditLine {
  /** 1, 2, 3… within one file and the files rotated from it, in the order the changes landed. */
  readonly seq: number
  /** When the operation ended (ISO 8601) and the process that made it. */
  readonly time: string
  readonly pid: number
  readonly kind: FsEvent['kind']
  readonly verb: FsEvent['verb']
  readonly path: string
  readonly key: string
  readonly to?: string
  /** The actor: a string as given; an object as `session#N`, N counting the objects this log has seen. */
  readonly actor?: string
  readonly type?: 'file' | 'directory'
  readonly versionBefore?: string
  readonly versionAfter?: string
  readonly bytes?: number
  readonly entries?: number
  readonly replaced?: boolean
  readonly code?: string
  readonly indeterminate?: boolean
  readonly durationMs: number
}

/**
 * An append-only audit trail of a store's changes: one JSON line per event of an
 * {@link EventedFileSystem} (attach {@link AuditLog.listener}), never content.
 *
 * Rules:
 * - each line is written by one `write(2)` on a file opened for appending, before the operation's
 *   caller hears. A process killed mid-write can leave its last line cut (Linux stops a write between
 *   pages of the file when the process is killed, so a line crossing a page boundary may be cut
 *   there), and so can a crash of the machine: a cut line is at the end of the file, and is ended when
 *   the log is opened again, so the next line starts clean and numbers on from the last whole one. A
 *   reader skips a line that does not parse: there is at most one per kill or crash;
 * - `seq` goes on from the last line of the file when it is opened again;
 * - before a line would take the file past `maxBytes`, it is renamed to `<path>.1` (older ones
 *   shift up to `<path>.<keep>`, the oldest dropped) and a new file is started;
 * - one process writes one log: two processes appending to one file keep whole lines, but each
 *   counts `seq` on its own (`pid` tells them apart) and rotation is not shared;
 * - a failed write (a full disk) does not fail the operation, which has happened: it is reported as
 *   a process warning and the line is lost (the log says nothing it did not write).
 */
export class AuditLog {
  readonly path: string
  readonly #maxBytes: number
  readonly #keep: number
  #fd: number | undefined
  /** A write stopped partway (a full disk): the next line starts on a line of its own. */
  #torn = false
  #size = 0
  /** The size past which the next line rotates the file: `maxBytes`, further after a rotation failed. */
  #rotateAt = 0
  #seq = 0
  readonly #actors = new WeakMap<object, string>()
  #actorCount = 0

  constructor(path: string, options: AuditLogOptions = {}) {
    const maxBytes = options.maxBytes ?? AUDIT_LOG_MAX_BYTES
    const keep = options.keep ?? AUDIT_LOG_KEEP
    if (!Number.isSafeInteger(maxBytes) || maxBytes < 4096) throw new RangeError(`maxBytes must be an integer of at least 4096, got ${String(maxBytes)}`)
    if (!Number.isSafeInteger(keep) || keep < 0) throw new RangeError(`keep must be a non-negative integer, got ${String(keep)}`)
    this.path = path
    this.#maxBytes = maxBytes
    this.#keep = keep
    this.#open()
  }

  /** The listener to attach: `evented.on(log.listener)`. */
  readonly listener: FsEventListener = (event) => this.write(event)

  /** Writes one event's line. */
  write(event: FsEvent): void {
    if (this.#fd === undefined) return
    const line = `${this.#torn ? '\n' : ''}${JSON.stringify(this.#line(event, this.#seq + 1))}\n`
    const bytes = Buffer.from(line, 'utf8')
    try {
      if (this.#size > 0 && this.#size + bytes.length > this.#rotateAt) this.#rotate()
      // A short write (the disk or the file-size limit ran out) is finished, or the line counts as torn.
      let written = 0
      try {
        while (written < bytes.length) written += writeSync(this.#fd, bytes, written)
      } finally {
        this.#size += written
        this.#torn = written > 0 && written < bytes.length ? true : this.#torn && written === 0
      }
      this.#seq++
    } catch (err) {
      process.emitWarning(`the audit log ${this.path} lost a line: ${err instanceof Error ? err.message : String(err)}`, 'SeamfsAuditWarning')
    }
  }

  /** Closes the file; later events are not written. Idempotent. */
  close(): void {
    if (this.#fd !== undefined) closeSync(this.#fd)
    this.#fd = undefined
  }

  #open(): void {
    const fd = openSync(this.path, 'a+', 0o600)
    this.#fd = fd
    this.#size = fstatSync(fd).size
    this.#rotateAt = this.#maxBytes
    if (this.#size === 0) return
    const length = Math.min(TAIL_BYTES, this.#size)
    const tail = Buffer.alloc(length)
    readSync(fd, tail, 0, length, this.#size - length)
    const text = tail.toString('utf8')
    if (!text.endsWith('\n')) {
      // A line cut by a crash of the machine: ended here, so the next one parses.
      writeSync(fd, '\n')
      this.#size++
    }
    const lines = text.split('\n').filter((l) => l !== '')
    for (let i = lines.length - 1; i >= 0; i--) {
      try {
        const seq = (JSON.parse(lines[i] as string) as { seq?: unknown }).seq
        if (typeof seq === 'number' && Number.isSafeInteger(seq)) {
          this.#seq = seq
          return
        }
      } catch {
        // the cut line, or not ours: an earlier one
      }
    }
  }

  /**
   * Starts a new file, the current one kept as `<path>.1`. Whatever fails on the way (something in
   * the place of a rotated file), the log goes on: in the current file, if it could not be moved.
   */
  #rotate(): void {
    const seq = this.#seq
    if (this.#fd !== undefined) closeSync(this.#fd)
    this.#fd = undefined
    try {
      if (this.#keep === 0) rmSync(this.path, { force: true })
      else {
        for (let n = this.#keep - 1; n >= 1; n--) if (existsSync(`${this.path}.${n}`)) renameSync(`${this.path}.${n}`, `${this.path}.${n + 1}`)
        renameSync(this.path, `${this.path}.1`)
      }
    } catch (err) {
      // Tried again only after as much again: a failing rename must not cost every line.
      this.#open()
      this.#seq = seq
      this.#rotateAt = this.#size + this.#maxBytes
      process.emitWarning(
        `the audit log ${this.path} could not be rotated, and goes on in place: ${err instanceof Error ? err.message : String(err)}`,
        'SeamfsAuditWarning',
      )
      return
    }
    this.#open()
    this.#seq = seq
  }

  #actor(actor: FsEvent['actor']): string | undefined {
    if (actor === undefined || typeof actor === 'string') return actor
    let name = this.#actors.get(actor)
    if (name === undefined) this.#actors.set(actor, (name = `session#${++this.#actorCount}`))
    return name
  }

  #line(event: FsEvent, seq: number): AuditLine {
    const actor = this.#actor(event.actor)
    const common = {
      seq,
      time: new Date(event.at).toISOString(),
      pid: process.pid,
      kind: event.kind,
      verb: event.verb,
      path: event.target.path,
      key: event.target.key,
      ...(event.to === undefined ? {} : { to: event.to.path }),
      ...(actor === undefined ? {} : { actor }),
    }
    const durationMs = Math.round(event.durationMs * 1000) / 1000
    if (event.kind === 'failed') return { ...common, code: event.code, ...(event.indeterminate ? { indeterminate: true } : {}), durationMs }
    return {
      ...common,
      type: event.type,
      ...(event.versionBefore === undefined ? {} : { versionBefore: event.versionBefore }),
      ...(event.versionAfter === undefined ? {} : { versionAfter: event.versionAfter }),
      ...(event.bytes === undefined ? {} : { bytes: event.bytes }),
      ...(event.entries === undefined ? {} : { entries: event.entries }),
      ...(event.replaced === undefined ? {} : { replaced: event.replaced }),
      durationMs,
    }
  }
}

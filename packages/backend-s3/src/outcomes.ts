/** How the store tells a request's failure: every attempt watched for a lost answer, and a refused condition told from an error. */
import { answerLost, httpStatusOf, noteConnectTimeout, outcomeOf, type Deadlines } from './errors.js'
import type { PutConflict } from './revisions.js'

/**
 * A failed conditional request as a {@link PutConflict}, or the error rethrown when it is not one.
 * With `ifMatch`, a 404 for the key (AWS's answer to `If-Match` on a missing key; radosgw's is 412)
 * is a refusal too; a missing bucket is not.
 */
export function conflictOf(err: unknown, conditional: boolean, unanswered: boolean, ifMatch = false): PutConflict {
  const status = httpStatusOf(err)
  const keyMissing = ifMatch && status === 404 && (err as { name?: unknown }).name !== 'NoSuchBucket'
  if (!conditional || status === undefined || !(status === 412 || status === 409 || status >= 500 || keyMissing)) throw err
  return { ok: false, status, unanswered, error: err }
}

/**
 * A failed PUT or copy: after an attempt that lost its answer, a {@link PutConflict} marked
 * `unanswered` (status 0 when the last attempt got no answer either), whatever the conditions: the
 * request may have been applied. Otherwise {@link conflictOf}.
 */
export function lostOrConflict(err: unknown, conditional: boolean, ifMatch: boolean): PutConflict {
  if (outcomeOf(err)?.lostAnswer === true) return { ok: false, status: httpStatusOf(err) ?? 0, unanswered: true, error: err }
  return conflictOf(err, conditional, false, ifMatch)
}

/** A command whose middleware stack takes the per-attempt watch of `Store` (every S3 command does). */
export interface Watchable {
  readonly middlewareStack: {
    add(middleware: <A, R>(next: (args: A) => Promise<R>) => (args: A) => Promise<R>, options: { step: 'deserialize'; priority: 'high'; name: string }): void
  }
}

/**
 * Watches the attempts of one command: the SDK runs each attempt (its retries too) through the
 * deserialize step, and this middleware sits outside the deserializer, so it sees every attempt's
 * error, with the HTTP status where the server answered. `lost`: an attempt may have reached the
 * server and lost its answer ({@link answerLost}).
 */
export class Attempts {
  lost = false
  readonly #deadlines: Deadlines | undefined

  constructor(deadlines: Deadlines | undefined) {
    this.#deadlines = deadlines
  }

  readonly middleware =
    <A, R>(next: (args: A) => Promise<R>) =>
    async (args: A): Promise<R> => {
      const started = performance.now()
      try {
        return await next(args)
      } catch (err) {
        // The idle deadline cannot pass sooner than it is long: an earlier timeout is the connect
        // deadline's, and nothing was sent (connectTimeoutMs below idleTimeoutMs, as by default).
        // Both are a `TimeoutError` without a `code` (the SDK names ECONNRESET, EPIPE and ETIMEDOUT
        // `TimeoutError` too, with their code: those may have lost an answer).
        const deadlines = this.#deadlines
        const { name, code } = err as { name?: unknown; code?: unknown }
        const connect = deadlines !== undefined && name === 'TimeoutError' && code === undefined && performance.now() - started < deadlines.idleTimeoutMs
        if (connect) noteConnectTimeout(err)
        else if (answerLost(err)) this.lost = true
        throw err
      }
    }
}

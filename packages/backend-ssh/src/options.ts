import type { Client } from 'ssh2'
import type { FsLimits } from '@seamfs/core/backend'

/** Options of {@link SftpFileSystem}, with core's size limits (`maxTextBytes`, `diffBasisMaxBytes`). */
export interface SftpFileSystemOptions extends FsLimits {
  /** Server host name or address (needed unless `client` is given; used again to reconnect). */
  readonly host?: string | undefined
  /** Server port (default 22). */
  readonly port?: number | undefined
  /** Login name (needed unless `client` is given). */
  readonly username?: string | undefined
  /** An OpenSSH-format private key, for public-key authentication. */
  readonly privateKey?: string | Buffer | undefined
  /** The passphrase of an encrypted `privateKey`. */
  readonly passphrase?: string | undefined
  /** A password, for password authentication. */
  readonly password?: string | undefined
  /**
   * Remote directory that scopes the filesystem: a path outside it, lexically
   * or through a symlink (checked with the server's `realpath`), is
   * `FS_SANDBOX_DENIED`. Relative to the login directory; default the login
   * directory itself. It must exist. A process on the server that swaps a
   * directory inside it for a link while seamfs works can still race single
   * requests out (SFTP works by path): each operation checks for that and
   * refuses, erasing what it wrote astray, but the window is narrowed, not
   * closed. For a hard boundary, have sshd confine the account
   * (`ChrootDirectory`); see the README.
   */
  readonly root?: string | undefined
  /** Base of relative paths (default `root`); a relative `cwd` is relative to `root`. */
  readonly cwd?: string | undefined
  /**
   * An ssh2 `Client` that is already connected (`ready`). seamfs opens its SFTP
   * session on it and never ends the client: the caller owns it. After that
   * connection drops, seamfs reconnects with a client of its own when `host`
   * and `username` are given (checking the host key as below); otherwise calls
   * fail with a retryable `FS_IO_ERROR`. The given client's host key is the caller's to check.
   * seamfs turns Nagle's algorithm off on it (`setNoDelay(true)`): its requests are pipelined.
   */
  readonly client?: Client | undefined
  /**
   * The server's host key fingerprint as `ssh-keygen -l -E sha256` prints it
   * (`SHA256:` and 43 base64 characters; anything else is a TypeError). A server
   * presenting another key is refused. With this or `hostVerifier`, the
   * known_hosts file is not read.
   */
  readonly hostKeySha256?: string | undefined
  /** Custom host key check on the raw key blob; runs after `hostKeySha256` when both are given. */
  readonly hostVerifier?: ((key: Buffer) => boolean) | undefined
  /**
   * The OpenSSH known_hosts file the server's key is checked against when
   * neither `hostKeySha256` nor `hostVerifier` is given (default
   * `~/.ssh/known_hosts`, read at each connection; a missing file knows no
   * host). As OpenSSH's `StrictHostKeyChecking yes`: an unknown host, a changed
   * key and an `@revoked` key are refused (`FS_IO_ERROR`, not retryable) with
   * the key's fingerprint and how to pin it. Plain, `[host]:port`, wildcard
   * (`*`, `?`), negated (`!`) and hashed (`|1|…`) names are understood;
   * `@cert-authority` lines are ignored.
   */
  readonly knownHostsFile?: string | undefined
  /**
   * INSECURE: accept whatever host key the server presents, unchecked (default
   * false). Anyone who can intercept the connection then gets the credentials
   * and the files. For throwaway test servers only; cannot be combined with a pin.
   */
  readonly acceptAnyHostKey?: boolean | undefined
  /** The ssh-agent socket to authenticate with (e.g. `process.env.SSH_AUTH_SOCK`); tried with the key and password. */
  readonly agent?: string | undefined
  /**
   * The connect timeout, in ms (default 20 000): how long connecting may take, from the TCP
   * connection through the SSH handshake to authentication (ssh2's `readyTimeout`). It bounds
   * nothing after that: see `requestTimeoutMs`.
   */
  readonly readyTimeoutMs?: number | undefined
  /**
   * The request deadline, in ms (default 30 000; more than 0): when an SFTP request (opening the
   * SFTP session too) has waited this long for its answer with no answer to any request meanwhile
   * (OpenSSH answers in order: a long queue that keeps moving is no hung server), the server is
   * taken for hung (a frozen server, a dead link that ssh2's keepalive, 15 s × 3, has not noticed
   * yet) and the connection for dead: it is closed (for a `client` given, only seamfs's SFTP
   * channel on it), every request pending on it fails at once with a retryable `FS_IO_ERROR` ("the
   * server did not answer for N ms"), and the next call connects anew. A mutation that meets it
   * after its change was sent is flagged `indeterminate` (it may have been made). A caller's
   * `signal` ends the wait sooner, per call.
   */
  readonly requestTimeoutMs?: number | undefined
  /** Mode bits of newly created files (default `0o600`). Existing files keep theirs. */
  readonly newFileMode?: number | undefined
  /**
   * Keep content hashes of files whose mtime is safely in the past, so `stat`
   * of an unchanged, settled file is one round trip instead of a full read
   * (default true). False hashes on every `stat`: it then also detects a writer
   * that restores the mtime and keeps the size.
   */
  readonly hashCache?: boolean | undefined
  /**
   * The lease of this filesystem's lock entries, in ms (default 10 000, at most 120 000, at least
   * 1 000). A version-guarded write, an edit, a remove or a rename takes the target's lock: a file
   * `.seamfs-lock-<24 hex>` made exclusively in the target's directory, renewed every third of
   * the lease while held and removed after. An entry whose holder died on this machine is taken over
   * at once; one of another machine once its lease ran out by the server's clock (SFTP's
   * whole-second mtimes make that up to about 2 s later).
   */
  readonly lockLeaseMs?: number | undefined
  /** How long an operation waits for a lock held by another writer before it fails with a retryable `FS_IO_ERROR` (ms; default 30 000). */
  readonly lockWaitMs?: number | undefined
  /**
   * After a write, edit, remove or rename in a directory (at most once per directory per 30 s),
   * and after a listing that met hidden names, list the directory in the background and remove the
   * stages and lock entries dead writers left there (default true). Removing a directory clears
   * them whatever this says.
   */
  readonly sweepAbandoned?: boolean | undefined
}

export const DEFAULT_PORT = 22
export const DEFAULT_READY_TIMEOUT_MS = 20_000
export const DEFAULT_NEW_FILE_MODE = 0o600
export const DEFAULT_REQUEST_TIMEOUT_MS = 30_000

/** Refuses options out of range (a RangeError); returns the mode of new files. */
export function checkOptions(options: Readonly<SftpFileSystemOptions>): number {
  const mode = options.newFileMode ?? DEFAULT_NEW_FILE_MODE
  if (!Number.isInteger(mode) || mode < 0 || mode > 0o777) throw new RangeError('newFileMode must be within 0o000..0o777')
  const { lockLeaseMs, lockWaitMs, requestTimeoutMs } = options
  if (lockLeaseMs !== undefined && !(Number.isFinite(lockLeaseMs) && lockLeaseMs >= 1_000)) throw new RangeError('lockLeaseMs must be at least 1000 (ms)')
  if (lockWaitMs !== undefined && !(Number.isFinite(lockWaitMs) && lockWaitMs >= 0)) throw new RangeError('lockWaitMs must be a number of ms, 0 or more')
  if (requestTimeoutMs !== undefined && !(Number.isFinite(requestTimeoutMs) && requestTimeoutMs > 0)) {
    throw new RangeError('requestTimeoutMs must be a number of ms, more than 0')
  }
  return mode
}

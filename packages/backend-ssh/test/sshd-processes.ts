/**
 * The processes of a dedicated test sshd (test-servers/sftp.ts: `startSftpInstance`), read from
 * /proc: its listener, and per connection `sshd: user [priv]` (the privileged monitor, the
 * listener's child) → `user@notty` (holds the socket) → `user@internal-sftp` (the SFTP server,
 * whose open files are the session's handles). Freezing sends SIGSTOP to all of them (the server
 * hangs mid-request, the sockets stay open), thawing SIGCONT. Only ever the PIDs below the given
 * listener: never another server's.
 */
import { readdirSync, readFileSync } from 'node:fs'

/** The parent of every process (PID → PPID), from /proc. */
function parents(): Map<number, number> {
  const map = new Map<number, number>()
  for (const name of readdirSync('/proc')) {
    if (!/^\d+$/.test(name)) continue
    try {
      const stat = readFileSync(`/proc/${name}/stat`, 'utf8')
      // The command name may hold spaces and parentheses: the fields start after the last ')'.
      const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ')
      map.set(Number(name), Number(fields[1]))
    } catch {
      // Gone meanwhile.
    }
  }
  return map
}

/** Every descendant of `pid` (children first). */
export function descendants(pid: number): number[] {
  const map = parents()
  const out: number[] = []
  let level = [pid]
  while (level.length > 0) {
    const next = [...map].filter(([, ppid]) => level.includes(ppid)).map(([child]) => child)
    out.push(...next)
    level = next
  }
  return out
}

function commandOf(pid: number): string {
  try {
    return readFileSync(`/proc/${pid}/cmdline`, 'utf8').replaceAll('\0', ' ').trim()
  } catch {
    return ''
  }
}

/** One connection to the server: its monitor's PID, and its network and SFTP processes (undefined until they exist). */
export interface SshdConnection {
  readonly monitor: number
  readonly network: number | undefined
  readonly sftp: number | undefined
}

/** The connections the listener `pid` serves now. */
export function connections(pid: number): SshdConnection[] {
  const map = parents()
  const childrenOf = (p: number): number[] => [...map].filter(([, ppid]) => ppid === p).map(([child]) => child)
  return childrenOf(pid).map((monitor) => {
    const network = childrenOf(monitor).find((p) => commandOf(p).includes('@notty'))
    const sftp = network === undefined ? undefined : childrenOf(network).find((p) => commandOf(p).includes('@internal-sftp'))
    return { monitor, network, sftp }
  })
}

/** The open file descriptors of `pid` (undefined when it is gone). */
export function openFds(pid: number): number | undefined {
  try {
    return readdirSync(`/proc/${pid}/fd`).length
  } catch {
    return undefined
  }
}

function signal(pid: number, sig: NodeJS.Signals): void {
  try {
    process.kill(pid, sig)
  } catch {
    // Gone meanwhile.
  }
}

/** SIGSTOPs the listener `pid` and every process below it; returns the PIDs stopped (for {@link thaw}). */
export function freeze(pid: number): number[] {
  signal(pid, 'SIGSTOP')
  const stopped = [pid]
  // Twice: a process forked while the first pass ran is caught by the second.
  for (let pass = 0; pass < 2; pass++) {
    for (const child of descendants(pid)) {
      if (stopped.includes(child)) continue
      signal(child, 'SIGSTOP')
      stopped.push(child)
    }
  }
  return stopped
}

/** SIGCONTs what {@link freeze} stopped, and anything below the listener now. */
export function thaw(pid: number, stopped: readonly number[]): void {
  for (const p of new Set([...stopped, pid, ...descendants(pid)])) signal(p, 'SIGCONT')
}

/** SIGKILLs the network process of a connection (`user@notty`): the server side of that connection dies, the listener lives. */
export function killConnection(connection: SshdConnection): boolean {
  if (connection.network === undefined) return false
  signal(connection.network, 'SIGKILL')
  return true
}

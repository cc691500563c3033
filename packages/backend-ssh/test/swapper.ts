/**
 * The attacker of the swap-race tests: a process on the server's machine that
 * swaps a directory inside the root with a symlink pointing outside, over and
 * over, with one atomic `renameat2(RENAME_EXCHANGE)` per swap (so the path
 * always names one or the other, never nothing). Perl, because it is on every
 * Debian and can make the raw syscall; it runs as the server's user, stops by
 * itself after `durationMs` and leaves the real directory in place.
 */
import { spawn } from 'node:child_process'
import { arch } from 'node:process'

/** renameat2 by architecture (x86_64 and aarch64; elsewhere the swap tests skip). */
const RENAMEAT2: Readonly<Record<string, number>> = { x64: 316, arm64: 276 }

const SCRIPT = String.raw`
use strict; use warnings; use Time::HiRes qw(time usleep);
my ($dir, $link, $ms, $hold, $nr) = @ARGV;
my $start = time; my $end = $start + $ms / 1000; my ($swaps, $failed) = (0, 0);
while (time < $end) {
  if (syscall($nr, -100, $dir, -100, $link, 2) == 0) { $swaps++ } else { $failed++ }
  usleep($hold) if $hold > 0;
}
# An even count leaves the real directory at its name.
while ($swaps % 2) { syscall($nr, -100, $dir, -100, $link, 2) == 0 ? $swaps++ : $failed++ }
printf "%d %d %.3f\n", $swaps, $failed, (time - $start) * 1000;
`

/** What a swapper run did. */
export interface SwapReport {
  /** Successful exchanges (each one flips the path between the directory and the link). */
  readonly swaps: number
  readonly failed: number
  readonly elapsedMs: number
}

export interface SwapperOptions {
  /** The directory inside the root that is swapped. */
  readonly dir: string
  /** A symlink (pointing outside) that takes the directory's name on every other swap. */
  readonly link: string
  readonly durationMs: number
  /** Microseconds slept after each swap (0: a tight loop). */
  readonly holdUs: number
  readonly uid: number
  readonly gid: number
}

/** True where the swapper can run (the architecture's renameat2 number is known). */
export const canSwap = RENAMEAT2[arch] !== undefined

/** Runs the swapper to its end; rejects when perl fails. */
export function runSwapper(o: SwapperOptions): Promise<SwapReport> {
  const nr = RENAMEAT2[arch]
  if (nr === undefined) return Promise.reject(new Error(`no renameat2 number for ${arch}`))
  const args = ['-e', SCRIPT, o.dir, o.link, String(o.durationMs), String(o.holdUs), String(nr)]
  return new Promise((resolve, reject) => {
    const child = spawn('/usr/bin/perl', args, { uid: o.uid, gid: o.gid, stdio: ['ignore', 'pipe', 'pipe'], cwd: '/' })
    let out = ''
    let err = ''
    child.stdout.on('data', (d: Buffer) => (out += d.toString()))
    child.stderr.on('data', (d: Buffer) => (err += d.toString()))
    child.on('error', reject)
    child.on('close', (code) => {
      const [swaps, failed, elapsedMs] = out.trim().split(' ').map(Number)
      if (code !== 0 || swaps === undefined || failed === undefined || elapsedMs === undefined) {
        reject(new Error(`swapper exited with ${code}: ${err.trim()}`))
      } else resolve({ swaps, failed, elapsedMs })
    })
  })
}

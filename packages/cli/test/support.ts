/**
 * Shared by the end-to-end tests: the BUILT bin (a plain `node` child has no
 * "source" condition, so it runs dist/, which `npm test` builds first), fresh
 * temporary directories, a child-process runner with a timeout that never
 * leaves the child behind, and the test sshd as a backend config.
 */
import { spawn } from 'node:child_process'
import { existsSync, mkdtempSync, realpathSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import type { BackendConfig } from '@seamfs/cli'

export const REPO = fileURLToPath(new URL('../../../', import.meta.url))
export const BIN = join(REPO, 'packages/cli/dist/bin.js')

const BUILT = [
  'packages/cli/dist/bin.js',
  'packages/cli/dist/cli.js',
  'packages/core/dist/index.js',
  'packages/backend-local/dist/index.js',
  'packages/backend-memory/dist/index.js',
  'packages/tools/dist/index.js',
  'packages/mcp/dist/index.js',
  'packages/mcp/dist/mcp.js',
  'conformance/dist/runner.js',
]
export const missingBuild: string[] = BUILT.filter((rel) => !existsSync(join(REPO, rel)))

/** A suite title that says why it is skipped when the build is missing. */
export function builtTitle(title: string): string {
  return missingBuild.length === 0 ? title : `${title} — SKIPPED: dist build missing (${missingBuild.join(', ')}); run \`npx tsc -b\``
}

/** The test sshd, as the remote project's setup provides it (`inject('sftp')`). */
interface SftpServer {
  readonly host: string
  readonly port: number
  readonly username: string
  readonly hostKeySha256: string
}

/** The `sftp` backend config of the test sshd at `root`, its private key in the file `keyFile`. */
export function sftpBackend(server: SftpServer, root: string, keyFile: string): BackendConfig {
  return { type: 'sftp', host: server.host, port: server.port, username: server.username, root, privateKeyFile: keyFile, hostKeySha256: server.hostKeySha256 }
}

/** Temporary directories made by {@link tempDir}, removed by {@link removeTempDirs}. */
const made: string[] = []

/** A fresh directory (its real path, as the child's process.cwd() reports it). */
export function tempDir(label: string): string {
  const dir = realpathSync(mkdtempSync(join(tmpdir(), `seamfs-cli-${label}-`)))
  made.push(dir)
  return dir
}

export function removeTempDirs(): void {
  for (const dir of made.splice(0)) rmSync(dir, { recursive: true, force: true })
}

export interface RunResult {
  readonly code: number | null
  readonly signal: NodeJS.Signals | null
  readonly stdout: string
  readonly stderr: string
}

export interface RunOptions {
  readonly cwd: string
  /** The clean HOME of the child (no global state is read or written elsewhere). */
  readonly home: string
  /** Written to the child's stdin, which is then closed (closed at once when absent). */
  readonly input?: string
  readonly timeoutMs?: number
  /** Variables set for the child over the defaults; `undefined` removes one. */
  readonly env?: Readonly<Record<string, string | undefined>>
}

/** `env` without its `undefined` entries. */
function childEnv(env: Readonly<Record<string, string | undefined>>): Record<string, string> {
  return Object.fromEntries(Object.entries(env).filter((e): e is [string, string] => e[1] !== undefined))
}

/** Runs `node bin.js ...args`; resolves when it exits, kills it (SIGKILL) and rejects on timeout. */
export function runBin(args: readonly string[], options: RunOptions): Promise<RunResult> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [BIN, ...args], {
      cwd: options.cwd,
      // Colour only where a test asks for it: the caller's FORCE_COLOR or NO_COLOR would change what stderr says.
      env: childEnv({
        ...process.env,
        FORCE_COLOR: undefined,
        NO_COLOR: undefined,
        HOME: options.home,
        AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED: 'true',
        ...options.env,
      }),
      stdio: ['pipe', 'pipe', 'pipe'],
    })
    let stdout = ''
    let stderr = ''
    child.stdout.setEncoding('utf8').on('data', (chunk: string) => (stdout += chunk))
    child.stderr.setEncoding('utf8').on('data', (chunk: string) => (stderr += chunk))
    const timeoutMs = options.timeoutMs ?? 20_000
    const timer = setTimeout(() => {
      child.kill('SIGKILL')
      reject(new Error(`seamfs ${args.join(' ')} timed out after ${timeoutMs} ms\nstdout: ${stdout}\nstderr: ${stderr}`))
    }, timeoutMs)
    child.on('error', (err) => {
      clearTimeout(timer)
      reject(err)
    })
    child.on('close', (code, signal) => {
      clearTimeout(timer)
      resolve({ code, signal, stdout, stderr })
    })
    child.stdin.on('error', () => undefined) // the child may exit without reading stdin
    child.stdin.end(options.input ?? '')
  })
}

/** Whether a process is still there. */
export function isAlive(pid: number): boolean {
  try {
    process.kill(pid, 0)
    return true
  } catch (err) {
    return (err as NodeJS.ErrnoException).code === 'EPERM'
  }
}

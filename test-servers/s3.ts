/**
 * The S3 test server: Ceph radosgw 16.2 on 127.0.0.1, booted by start-s3.sh
 * (single mon, memstore OSD, radosgw beast) in a fresh temp dir with free
 * ports, and stopped by PID by stop-s3.sh, which also removes the dir.
 */
import { execFile } from 'node:child_process'
import { accessSync, constants, mkdtempSync, readFileSync, rmSync } from 'node:fs'
import { createServer } from 'node:net'
import { tmpdir } from 'node:os'
import { delimiter, join } from 'node:path'
import { fileURLToPath } from 'node:url'

/** Coordinates of the S3 server the tests use. */
export interface S3ServerInfo {
  readonly endpoint: string
  readonly region: string
  readonly accessKeyId: string
  readonly secretAccessKey: string
  /** An unversioned bucket, and a versioned one. */
  readonly bucket: string
  readonly versionedBucket: string
}

export interface Started<I> {
  readonly server?: { readonly info: I; stop(): Promise<void> } | undefined
  /** Why there is no server, when there is none. */
  readonly why: string
}

const HERE = fileURLToPath(new URL('.', import.meta.url))
const BINARIES = ['ceph-mon', 'ceph-osd', 'radosgw', 'radosgw-admin', 'ceph', 'ceph-authtool', 'monmaptool', 'curl']
const ATTEMPTS = 3
const BOOT_TIMEOUT_MS = 120_000

function onPath(binary: string): boolean {
  return (process.env['PATH'] ?? '').split(delimiter).some((dir) => {
    try {
      accessSync(join(dir, binary), constants.X_OK)
      return true
    } catch {
      return false
    }
  })
}

/** A port the kernel just handed out on 127.0.0.1 (free now; the boot retries if it is taken in between). */
function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer()
    server.once('error', reject)
    server.listen(0, '127.0.0.1', () => {
      const address = server.address()
      server.close(() => (typeof address === 'object' && address !== null ? resolve(address.port) : reject(new Error('no port'))))
    })
  })
}

function run(script: string, args: readonly string[], timeout: number): Promise<{ ok: boolean; output: string }> {
  return new Promise((resolve) => {
    execFile('bash', [join(HERE, script), ...args], { timeout, killSignal: 'SIGKILL', maxBuffer: 16 * 1024 * 1024 }, (err, stdout, stderr) => {
      resolve({ ok: err === null, output: `${stdout}${stderr}${err === null ? '' : `\n(${err.message})`}` })
    })
  })
}

function parseEnv(text: string): Record<string, string> {
  const env: Record<string, string> = {}
  for (const line of text.split('\n')) {
    const at = line.indexOf('=')
    if (at > 0) env[line.slice(0, at)] = line.slice(at + 1)
  }
  return env
}

/**
 * Last-resort cleanup if the process exits without the global teardown
 * (a crash, Ctrl-C): SIGKILL the recorded PIDs that still belong to `dir`.
 */
function killSync(dir: string): void {
  let pids = ''
  try {
    pids = readFileSync(join(dir, 'pids'), 'utf8')
  } catch {
    return
  }
  for (const line of pids.split('\n')) {
    const pid = Number(line.split(' ')[1])
    if (!Number.isInteger(pid) || pid <= 0) continue
    try {
      if (!readFileSync(`/proc/${pid}/cmdline`, 'utf8').includes(`${dir}/`)) continue
      process.kill(pid, 'SIGKILL')
    } catch {
      // already gone
    }
  }
  rmSync(dir, { recursive: true, force: true })
}

async function bootOnce(): Promise<{ info: S3ServerInfo; dir: string } | { error: string }> {
  const dir = mkdtempSync(join(tmpdir(), 'seamfs-s3-'))
  const [mon, rgw] = [await freePort(), await freePort()]
  // The OSD binds 4 ports, the first free ones of its range; below the kernel's ephemeral range.
  const osdMin = 20_000 + Math.floor(Math.random() * 120) * 100
  const started = Date.now()
  const result = await run('start-s3.sh', [dir, String(mon), String(rgw), String(osdMin), String(osdMin + 99)], BOOT_TIMEOUT_MS)
  if (!result.ok) {
    await run('stop-s3.sh', [dir], 60_000)
    return { error: result.output }
  }
  const env = parseEnv(readFileSync(join(dir, 'env'), 'utf8'))
  const get = (name: string): string => {
    const value = env[name]
    if (value === undefined) throw new Error(`start-s3.sh wrote no ${name}`)
    return value
  }
  if (process.env['SEAMFS_TEST_SERVERS_VERBOSE'] === '1') console.log(`S3 (radosgw) ready in ${Date.now() - started} ms at ${get('S3_ENDPOINT')}`)
  return {
    dir,
    info: {
      endpoint: get('S3_ENDPOINT'),
      region: get('S3_REGION'),
      accessKeyId: get('S3_ACCESS_KEY'),
      secretAccessKey: get('S3_SECRET_KEY'),
      bucket: get('S3_BUCKET'),
      versionedBucket: get('S3_VERSIONED_BUCKET'),
    },
  }
}

/**
 * Boots Ceph radosgw. Missing binaries are reported in `why` (the S3 suites
 * skip and say so), and so is a boot that failed three times, with the log
 * tails printed; under CI=true both throw instead: CI never skips S3.
 */
export async function startS3(): Promise<Started<S3ServerInfo>> {
  const ci = process.env['CI'] === 'true'
  const missing = BINARIES.filter((b) => !onPath(b))
  if (missing.length > 0) {
    const why = `Ceph radosgw is not installed (missing ${missing.join(', ')}; apt-get install ceph-mon ceph-osd radosgw ceph-common curl)`
    if (ci) throw new Error(`CI=true and ${why}`)
    return { why }
  }
  const errors: string[] = []
  for (let attempt = 1; attempt <= ATTEMPTS; attempt++) {
    const booted = await bootOnce()
    if ('error' in booted) {
      errors.push(booted.error)
      console.error(`S3 test server: boot attempt ${attempt} of ${ATTEMPTS} failed:\n${booted.error}`)
      continue
    }
    const { dir, info } = booted
    const onExit = (): void => killSync(dir)
    process.once('exit', onExit)
    let stopped: Promise<void> | undefined
    const stop = (): Promise<void> =>
      (stopped ??= (async () => {
        process.removeListener('exit', onExit)
        const result = await run('stop-s3.sh', [dir], 60_000)
        if (!result.ok) {
          console.error(`S3 test server: stop-s3.sh failed:\n${result.output}`)
          killSync(dir)
        }
      })())
    return { server: { info, stop }, why: '' }
  }
  const why = `the S3 test server (Ceph radosgw) failed to boot ${ATTEMPTS} times; last output:\n${errors.at(-1) ?? ''}`
  if (ci) throw new Error(`CI=true and ${why}`)
  return { why: why.split('\n')[0] ?? why }
}

import { spawn } from 'node:child_process'
import { existsSync, mkdtempSync, readFileSync, readdirSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { fileURLToPath, pathToFileURL } from 'node:url'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { LocalFileSystem } from '@seamfs/backend-local'

// The child runs the built package (npm test builds before it tests).
const DIST = fileURLToPath(new URL('../dist/index.js', import.meta.url))
const ROUNDS = 200
const SEED = 0x5eed

const CONTENT_A = 'a'.repeat(2 * 1024 * 1024) + '\nend of A\n'
const CONTENT_B = '中'.repeat(1024 * 1024) + '\nend of B\n'

const CHILD = `
import { LocalFileSystem } from ${JSON.stringify(pathToFileURL(DIST).href)}
const fs = new LocalFileSystem({ cwd: process.argv[1] })
const a = 'a'.repeat(2 * 1024 * 1024) + '\\nend of A\\n'
const b = '中'.repeat(1024 * 1024) + '\\nend of B\\n'
const target = await fs.resolve('target.txt')
for (let i = 0; ; i++) {
  await fs.writeText(target, i % 2 === 0 ? b : a)
  if (i === 0) process.stdout.write('ready\\n')
}
`

/** mulberry32: a tiny seeded PRNG, so a failing round can be replayed. */
function prng(seed: number): () => number {
  let s = seed >>> 0
  return () => {
    s = (s + 0x6d2b79f5) >>> 0
    let t = s
    t = Math.imul(t ^ (t >>> 15), t | 1)
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61)
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296
  }
}

function runUntilKilled(dir: string, delayMs: number): Promise<void> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, ['--input-type=module', '-e', CHILD, dir], {
      stdio: ['ignore', 'pipe', 'inherit'],
    })
    let ready = false
    child.stdout.on('data', (data: Buffer) => {
      if (!ready && data.toString().includes('ready')) {
        ready = true
        setTimeout(() => child.kill('SIGKILL'), delayMs)
      }
    })
    child.on('error', reject)
    child.on('exit', (_code, signal) => {
      if (signal === 'SIGKILL') resolve()
      else reject(new Error(`writer exited on its own (code ${String(_code)}) before the kill`))
    })
  })
}

describe.skipIf(!existsSync(DIST))('crash safety (SIGKILL of a writer; needs the build from `tsc -b`)', () => {
  let dir: string
  beforeAll(() => {
    dir = mkdtempSync(join(tmpdir(), 'seamfs-crash-'))
  })
  afterAll(() => {
    rmSync(dir, { recursive: true, force: true })
  })

  it(`after ${ROUNDS} kills at random moments (seed ${SEED}), the file is always whole and the next write leaves no residue`, async () => {
    const random = prng(SEED)
    const survivor = new LocalFileSystem({ cwd: dir })
    const target = await survivor.resolve('target.txt')
    writeFileSync(target.targetKey, CONTENT_A)
    let killedMidWrite = 0
    for (let round = 0; round < ROUNDS; round++) {
      const delay = Math.floor(random() * 25)
      await runUntilKilled(dir, delay)
      const content = readFileSync(target.targetKey, 'utf8')
      const whole = content === CONTENT_A || content === CONTENT_B
      if (!whole) throw new Error(`round ${round} (delay ${delay} ms): torn file of ${content.length} chars`)
      if (readdirSync(dir).length > 1) killedMidWrite++
      await survivor.writeText(target, round % 2 === 0 ? CONTENT_A : CONTENT_B)
      await survivor.close() // its own idle staging directory goes now, not after a second
      const left = readdirSync(dir)
      if (left.length !== 1) throw new Error(`round ${round}: residue left after the next write: ${left.join(', ')}`)
    }
    // Proof that the test exercised crashes inside a write, not only between writes.
    console.log(`killed mid-write in ${killedMidWrite} of ${ROUNDS} rounds`)
    expect(killedMidWrite).toBeGreaterThan(ROUNDS / 20)
  }, 300_000)
})

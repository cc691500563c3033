/**
 * What the lock tests leave behind, cleaned after each test: temporary directories, and child
 * processes (killed, a stopped one woken first so that the kill lands).
 */
import type { ChildProcess } from 'node:child_process'
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterEach } from 'vitest'

const children: ChildProcess[] = []
const dirs: string[] = []

afterEach(() => {
  for (const child of children.splice(0)) {
    child.kill('SIGCONT')
    child.kill('SIGKILL')
  }
  for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true })
})

/** A fresh directory under the system's temp dir, removed after the test. */
export function scratchDir(label: string): string {
  const dir = mkdtempSync(join(tmpdir(), `seamfs-${label}-`))
  dirs.push(dir)
  return dir
}

/** `child`, killed after the test if it is still running. */
export function tracked<T extends ChildProcess>(child: T): T {
  children.push(child)
  return child
}

/** Shared fixtures of the tools tests: the same tools over a memory and a real local backend. */
import { mkdirSync, mkdtempSync, readFileSync, realpathSync, rmSync, symlinkSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { dirname, join } from 'node:path'
import { expect } from 'vitest'
import type { FileSystem, FsErrorCode } from '@seamfs/core'
import { LocalFileSystem } from '@seamfs/backend-local'
import { MemoryFileSystem } from '@seamfs/backend-memory'
import { createFileTools, type FileTool, type ObservationPolicy, type ToolContext, type ToolResult, type ToolsConfig } from '@seamfs/tools'

export const BACKENDS = ['memory', 'local'] as const
export type BackendKind = (typeof BACKENDS)[number]

/** A seed: text, or a directory (`null`), or a symbolic link. */
export type Seed = string | null | { readonly symlink: string }

export interface Harness {
  readonly kind: BackendKind
  /** Absolute workspace (the tools' cwd); display paths start with it. */
  readonly cwd: string
  readonly fs: FileSystem
  /** `list`, `read`, `write`, `edit` (and whatever else createFileTools returns), by name. */
  readonly tools: Readonly<Record<string, FileTool>>
  /** `${cwd}/${rel}`. */
  abs(rel: string): string
  /** Calls a tool by name. */
  call(name: string, args: unknown, context?: ToolContext): Promise<ToolResult>
  /** Creates or replaces a file behind the tools' back (parents made). */
  put(rel: string, content: string): void
  /** Creates a file, directory or symlink behind the tools' back (parents made). */
  seed(rel: string, seed: Seed): void
  /** Deletes a file behind the tools' back. */
  remove(rel: string): void
  /** A file's content straight from the store, or undefined when absent. */
  peek(rel: string): string | undefined
  /** Removes the local temp tree. */
  dispose(): void
}

export interface HarnessOptions {
  readonly files?: Readonly<Record<string, Seed>>
  readonly config?: Partial<ToolsConfig>
  readonly policy?: ObservationPolicy | undefined
}

function wrap(
  kind: BackendKind,
  cwd: string,
  fs: FileSystem,
  options: HarnessOptions,
  io: Pick<Harness, 'put' | 'seed' | 'remove' | 'peek' | 'dispose'>,
): Harness {
  const list = createFileTools({ fs, policy: options.policy, config: options.config })
  const tools = Object.fromEntries(list.map((t) => [t.name, t]))
  return {
    kind,
    cwd,
    fs,
    tools,
    abs: (rel) => `${cwd}/${rel}`,
    call(name, args, context) {
      const tool = tools[name]
      if (tool === undefined) throw new Error(`no tool "${name}"`)
      return tool.execute(args, context)
    },
    ...io,
  }
}

function memoryHarness(options: HarnessOptions): Harness {
  const cwd = '/w'
  const files: Record<string, string | null | { symlink: string }> = {}
  for (const [rel, seed] of Object.entries(options.files ?? {})) files[seed === null ? `${rel}/` : rel] = seed
  const fs = new MemoryFileSystem({ cwd, files })
  const vol = fs.volume
  const put = (rel: string, content: string): void => {
    vol.mkdirSync(dirname(`${cwd}/${rel}`), { recursive: true })
    vol.writeFileSync(`${cwd}/${rel}`, content)
  }
  return wrap('memory', cwd, fs, options, {
    put,
    seed(rel, seed) {
      if (seed === null) vol.mkdirSync(`${cwd}/${rel}`, { recursive: true })
      else if (typeof seed === 'string') put(rel, seed)
      else {
        vol.mkdirSync(dirname(`${cwd}/${rel}`), { recursive: true })
        vol.symlinkSync(seed.symlink, `${cwd}/${rel}`)
      }
    },
    remove(rel) {
      vol.unlinkSync(`${cwd}/${rel}`)
    },
    peek(rel) {
      return vol.existsSync(`${cwd}/${rel}`) ? String(vol.readFileSync(`${cwd}/${rel}`, 'utf8')) : undefined
    },
    dispose() {},
  })
}

function localHarness(options: HarnessOptions): Harness {
  const cwd = realpathSync(mkdtempSync(join(tmpdir(), 'seamfs-tools-')))
  const put = (rel: string, content: string): void => {
    mkdirSync(dirname(join(cwd, rel)), { recursive: true })
    writeFileSync(join(cwd, rel), content)
  }
  const seed = (rel: string, value: Seed): void => {
    if (value === null) mkdirSync(join(cwd, rel), { recursive: true })
    else if (typeof value === 'string') put(rel, value)
    else {
      mkdirSync(dirname(join(cwd, rel)), { recursive: true })
      symlinkSync(value.symlink, join(cwd, rel))
    }
  }
  for (const [rel, value] of Object.entries(options.files ?? {})) seed(rel, value)
  const fs = new LocalFileSystem({ cwd })
  return wrap('local', cwd, fs, options, {
    put,
    seed,
    remove(rel) {
      rmSync(join(cwd, rel))
    },
    peek(rel) {
      try {
        return readFileSync(join(cwd, rel), 'utf8')
      } catch {
        return undefined
      }
    },
    dispose() {
      void fs.close()
      rmSync(cwd, { recursive: true, force: true })
    },
  })
}

/** A fresh harness; call `dispose()` when done (tests use {@link withHarness} or afterEach). */
export function makeHarness(kind: BackendKind, options: HarnessOptions = {}): Harness {
  return kind === 'memory' ? memoryHarness(options) : localHarness(options)
}

/** Runs `body` on a fresh harness and disposes it afterwards. */
export async function withHarness<T>(kind: BackendKind, options: HarnessOptions, body: (h: Harness) => Promise<T>): Promise<T> {
  const h = makeHarness(kind, options)
  try {
    return await body(h)
  } finally {
    h.dispose()
  }
}

/** Asserts a failure result: exactly `text`, and `code` (or no code for an input error). */
export function expectError(result: ToolResult, text: string, code?: FsErrorCode): void {
  expect(result.isError).toBe(true)
  expect(result.text).toBe(text)
  expect(result.code).toBe(code)
  expect(result.value).toBeUndefined()
}

/** Asserts a success and returns its text. */
export function expectOk(result: ToolResult): string {
  expect(result.isError, result.text).toBe(false)
  expect(result.code).toBeUndefined()
  return result.text
}

/** The `<path>…</path> <type>file</type>` read envelope around `content` lines. */
export function readEnvelope(path: string, body: readonly string[], footer: string): string {
  const content = body.length === 0 ? footer : `${body.join('\n')}\n\n${footer}`
  return `<path>${path}</path>\n<type>file</type>\n<content>\n${content}\n</content>`
}

/** The list envelope. */
export function listEnvelope(path: string, body: readonly string[], footer: string): string {
  const content = body.length === 0 ? footer : `${body.join('\n')}\n\n${footer}`
  return `<path>${path}</path>\n<type>directory</type>\n<content>\n${content}\n</content>`
}

/** Splits an envelope into its body lines and footer (the inverse of the two builders above). */
export function parseEnvelope(text: string): { path: string; type: string; body: string[]; footer: string } {
  const lines = text.split('\n')
  const path = /^<path>(.*)<\/path>$/s.exec(lines[0] ?? '')?.[1]
  const type = /^<type>(.*)<\/type>$/.exec(lines[1] ?? '')?.[1]
  expect(lines[2]).toBe('<content>')
  expect(lines.at(-1)).toBe('</content>')
  const footer = lines.at(-2) ?? ''
  const body = lines.slice(3, -2)
  if (body.length > 0) expect(body.pop()).toBe('')
  if (path === undefined || type === undefined) throw new Error(`not an envelope: ${JSON.stringify(text)}`)
  return { path, type, body, footer }
}

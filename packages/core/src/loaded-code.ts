import { existsSync, readFileSync } from 'node:fs'
import { dirname, join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { processWide } from './translate.js'

/**
 * The code of the seamfs packages this process runs, as paths of this machine: what a model must
 * never change, or the next start of the server (an MCP server, a CLI, an app) would run what it
 * wrote. Each package adds itself when it is loaded ({@link registerLoadedPackage}), however it
 * was installed or linked (npm workspaces, `npm link`, a clone served as the workspace): the path
 * is the real one Node loaded it from.
 */
const loaded: Set<string> = processWide('core:loaded-code', () => new Set<string>())

/** Parent directories searched for a module's package.json. */
const MAX_DEPTH = 6

/**
 * Records the package of the module at `moduleUrl` (its `import.meta.url`) as code this process
 * runs: its `package.json` (whose `exports` say which files load), the directory the module was
 * loaded from (its build, or its sources when run from them) and the package's `dist`. Called once
 * by each seamfs package's entry; a package of a host's own may call it too.
 */
export function registerLoadedPackage(moduleUrl: string): void {
  if (!moduleUrl.startsWith('file:')) return
  const dir = dirname(fileURLToPath(moduleUrl))
  loaded.add(dir)
  let root = dir
  for (let depth = 0; depth < MAX_DEPTH; depth++) {
    if (existsSync(join(root, 'package.json'))) {
      loaded.add(join(root, 'package.json'))
      loaded.add(join(root, 'dist'))
      for (const entry of entriesOf(join(root, 'package.json'))) loaded.add(join(root, entry))
      return
    }
    const up = dirname(root)
    if (up === root) return
    root = up
  }
}

/**
 * What a manifest names as code to run: its `bin` (a command's shim: what `npx` and the shell run),
 * `main` and `module`. The `exports` targets are under `dist` (or whatever `main` names).
 */
function entriesOf(manifest: string): string[] {
  try {
    const json = JSON.parse(readFileSync(manifest, 'utf8')) as { bin?: unknown; main?: unknown; module?: unknown }
    const bins: unknown[] = typeof json.bin === 'object' && json.bin !== null ? Object.values(json.bin) : [json.bin]
    const named: unknown[] = [json.main, json.module, ...bins]
    return named.filter((p): p is string => typeof p === 'string' && p !== '' && !p.split(/[\\/]/).includes('..'))
  } catch {
    return []
  }
}

/** The paths {@link registerLoadedPackage} recorded so far (absolute paths of this machine). */
export function loadedCodePaths(): readonly string[] {
  return [...loaded]
}

registerLoadedPackage(import.meta.url)

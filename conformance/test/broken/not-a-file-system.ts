import { MapFileSystem } from '../../examples/map-file-system.js'
import { brokenConformance } from './base.js'

/**
 * Broken: not a `FileSystem` at all: a plain object that forwards every member to a correct backend
 * (as a hand-rolled adapter would), so every public method is its own code, outside core.
 */
function forwarding(fs: MapFileSystem): MapFileSystem {
  const out: Record<string, unknown> = { nodes: fs.nodes, put: fs.put.bind(fs) }
  for (let p = Object.getPrototypeOf(fs) as object | null; p !== null && p !== Object.prototype; p = Object.getPrototypeOf(p) as object | null) {
    for (const name of Object.getOwnPropertyNames(p)) {
      if (name === 'constructor' || name in out) continue
      const value = (fs as unknown as Record<string, unknown>)[name]
      out[name] = typeof value === 'function' ? (value as (...args: unknown[]) => unknown).bind(fs) : value
    }
  }
  out['capabilities'] = fs.capabilities
  return out as unknown as MapFileSystem
}

export default brokenConformance('a plain object forwarding to a backend', (limits) => forwarding(new MapFileSystem(limits)))

/**
 * The factory module for the Map example: `seamfs-conformance` loads a module
 * like this one (its default export), and a vitest file can pass the same
 * object to `describeConformance`.
 */
import type { ConformanceOptions } from '@seamfs/conformance'
import { MapFileSystem } from './map-file-system.js'

const key = (path: string): string => `/${path}`

const mapConformance: ConformanceOptions<MapFileSystem> = {
  name: 'MapFileSystem (example)',
  create: ({ limits }) => ({ fs: new MapFileSystem(limits) }),
  external: {
    writeBytes: (subject, path, bytes) => {
      subject.fs.put(key(path), bytes.slice())
    },
    readBytes: (subject, path) => {
      const node = subject.fs.nodes.get(key(path))
      if (node?.kind !== 'file') throw new Error(`no file at ${path}`)
      return node.bytes
    },
    remove: (subject, path) => {
      subject.fs.nodes.delete(key(path))
    },
  },
  options: { modelRuns: 200 },
}

export default mapConformance

/**
 * The conformance options of an OverlayFileSystem over any backend, from that backend's own:
 * each subject is an overlay over a fresh subject of the backend. The links the kit plants go into
 * the store under the overlay, as a program of the user's would make them. A change the kit makes
 * behind the subject's back (`writeBytes`, `remove`) is one to the store after the overlay's own
 * change of that path was discarded: a path the overlay changed keeps its content whatever the
 * store does (that is what an overlay is for), so only there can the store's change show.
 */
import type { ConformanceOptions, ConformanceSubject } from '@seamfs/conformance'
import type { FileSystem } from '@seamfs/core'
import { OverlayFileSystem } from '@seamfs/tools'

export function overlayConformance<F extends FileSystem>(backend: ConformanceOptions<F>): ConformanceOptions<OverlayFileSystem> {
  const lowers = new WeakMap<OverlayFileSystem, ConformanceSubject<F>>()
  const lowerOf = (subject: ConformanceSubject<OverlayFileSystem>): ConformanceSubject<F> => lowers.get(subject.fs) as ConformanceSubject<F>
  const { writeBytes, remove, symlink } = backend.external ?? {}
  return {
    name: `OverlayFileSystem over ${backend.name}`,
    create: async (context) => {
      const lower = await backend.create(context)
      const fs = await OverlayFileSystem.open(lower.fs)
      lowers.set(fs, lower)
      return { fs, dispose: lower.dispose }
    },
    external: {
      ...(writeBytes === undefined
        ? {}
        : {
            writeBytes: async (subject, path, bytes) => {
              await subject.fs.discard({ paths: [path] })
              await writeBytes(lowerOf(subject), path, bytes)
            },
          }),
      ...(remove === undefined
        ? {}
        : {
            remove: async (subject, path) => {
              await subject.fs.discard({ paths: [path] })
              // A file only the overlay had is gone with its change.
              if ((await subject.fs.stat(await subject.fs.resolve(path))) !== undefined) await remove(lowerOf(subject), path)
            },
          }),
      ...(symlink === undefined ? {} : { symlink: (subject, path, target) => symlink(lowerOf(subject), path, target) }),
    },
    options: backend.options,
  }
}

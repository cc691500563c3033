import { FsError, type EditOptions, type FsEditOutcome, type FsEditRequest, type FsTarget } from '@seamfs/core'
import { MapFileSystem } from '../../examples/map-file-system.js'
import { brokenConformance } from './base.js'

/**
 * Broken: a public "fast path" for replaceAll through `String#replaceAll`, where `$&`, `$$`, `` $` ``
 * and `$'` in the replacement are patterns. Core's literal edit treats `$` literally, so only an
 * override of the public method can break it; the path is taken only for a `$` with replaceAll.
 */
class ReplaceAllPatterns extends MapFileSystem {
  override async editText(target: FsTarget, edit: FsEditRequest, opts: EditOptions = {}): Promise<FsEditOutcome> {
    if (edit?.replaceAll !== true || typeof edit.newString !== 'string' || !edit.newString.includes('$')) return super.editText(target, edit, opts)
    let texts: { readonly before: string; readonly after: string } | undefined
    const request = { expected: opts.expected, signal: opts.signal, maxBytes: this.maxTextBytes }
    const version = await this.updateBytes(target, request, (bytes) => {
      const before = new TextDecoder().decode(bytes)
      if (edit.oldString === '' || !before.includes(edit.oldString)) {
        throw FsError.at('FS_EDIT_NOT_FOUND', 'edit', target.displayPath, 'oldString was not found')
      }
      texts = { before, after: before.replaceAll(edit.oldString, edit.newString) }
      return new TextEncoder().encode(texts.after)
    })
    if (texts === undefined) throw FsError.io('edit', target.displayPath, 'nothing was edited')
    return { version, ...texts }
  }
}

export default brokenConformance('expands $ patterns in replaceAll', (limits) => new ReplaceAllPatterns(limits))

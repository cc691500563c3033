/**
 * Golden tests of `delete`, `move` and `create_directory`: every success and refusal text in
 * full, the read-before-write flows (blind, stale, after a read), the sandbox fence, and which
 * tools a backend's capabilities offer. Run on each harness backend that declares the
 * capabilities (memory; local once it does).
 */
import { afterEach, describe, expect, it } from 'vitest'
import { ObservationPolicy, SandboxedFileSystem, type FsCapabilities } from '@seamfs/core'
import { MemoryFileSystem } from '@seamfs/backend-memory'
import { createFileTools, createFileToolsByName, type FileTool, type ToolResult } from '@seamfs/tools'
import { BACKENDS, expectError, expectOk, makeHarness, type BackendKind, type Harness, type HarnessOptions } from './tool-harness.js'

const S = { session: 'session-1' }
const OBSERVE = ' — read the file, then retry'
const REREAD = ' — re-read the file, then retry'

const capabilitiesOf = (kind: BackendKind): FsCapabilities => {
  const h = makeHarness(kind)
  h.dispose()
  return h.fs.capabilities
}
/** The harness backends that can remove, rename and create directories. */
const CAPABLE = BACKENDS.filter((kind) => {
  const c = capabilitiesOf(kind)
  return c.remove === true && c.rename !== undefined && c.createDirectory !== undefined
})

describe.each(CAPABLE)('delete, move and create_directory on %s', (kind: BackendKind) => {
  let harness: Harness | undefined
  afterEach(() => {
    harness?.dispose()
    harness = undefined
  })
  const setup = (options: HarnessOptions = {}): Harness =>
    (harness = makeHarness(kind, { policy: new ObservationPolicy(), files: { 'a.txt': 'alpha\n', 'b.txt': 'bee\n', 'd/x.txt': 'x\n', e: null }, ...options }))

  describe('delete', () => {
    it('a file the session read is deleted: exact text and value; the path is then recorded absent', async () => {
      const h = setup()
      expectOk(await h.call('read', { file_path: 'a.txt' }, S))
      const result = await h.call('delete', { path: 'a.txt' }, S)
      expect(expectOk(result)).toBe(`Deleted file "${h.abs('a.txt')}".`)
      expect(result.value).toEqual({ path: h.abs('a.txt'), type: 'file' })
      expect(h.peek('a.txt')).toBeUndefined()
      // recorded absent: an edit is "not found" (not "read first"), a write creates
      expectError(
        await h.call('edit', { file_path: 'a.txt', old_string: 'a', new_string: 'b' }, S),
        `Error: cannot edit "${h.abs('a.txt')}": not found`,
        'FS_NOT_FOUND',
      )
      expectOk(await h.call('write', { file_path: 'a.txt', content: 'again\n' }, S))
    })

    it('a blind delete is refused FS_NOT_OBSERVED with the read remedy; the file stays', async () => {
      const h = setup()
      expectError(await h.call('delete', { path: 'a.txt' }, S), `Error: remove requires reading "${h.abs('a.txt')}" first${OBSERVE}`, 'FS_NOT_OBSERVED')
      expect(h.peek('a.txt')).toBe('alpha\n')
      // another session's read does not count
      expectOk(await h.call('read', { file_path: 'a.txt' }, { session: 'other' }))
      expect((await h.call('delete', { path: 'a.txt' }, S)).code).toBe('FS_NOT_OBSERVED')
    })

    it('a stale delete (another writer changed the file after the read) is refused FS_STALE_VERSION; a re-read unblocks', async () => {
      const h = setup()
      expectOk(await h.call('read', { file_path: 'a.txt' }, S))
      h.put('a.txt', 'rewritten by someone else\n')
      expectError(
        await h.call('delete', { path: 'a.txt' }, S),
        `Error: cannot delete "${h.abs('a.txt')}": file changed since it was read${REREAD}`,
        'FS_STALE_VERSION',
      )
      expect(h.peek('a.txt')).toBe('rewritten by someone else\n')
      expectOk(await h.call('read', { file_path: 'a.txt' }, S))
      expect(expectOk(await h.call('delete', { path: 'a.txt' }, S))).toBe(`Deleted file "${h.abs('a.txt')}".`)
    })

    it('a file the session wrote or edited needs no further read', async () => {
      const h = setup()
      expectOk(await h.call('write', { file_path: 'new.txt', content: 'mine\n' }, S))
      expectOk(await h.call('delete', { path: 'new.txt' }, S))
      expectOk(await h.call('read', { file_path: 'b.txt' }, S))
      expectOk(await h.call('edit', { file_path: 'b.txt', old_string: 'bee', new_string: 'wasp' }, S))
      expect(expectOk(await h.call('delete', { path: 'b.txt' }, S))).toBe(`Deleted file "${h.abs('b.txt')}".`)
    })

    it('an empty directory is deleted without a read; one with entries is FS_NOT_EMPTY, with what to do, and stays', async () => {
      const h = setup()
      const result = await h.call('delete', { path: 'e' }, S)
      expect(expectOk(result)).toBe(`Deleted empty directory "${h.abs('e')}".`)
      expect(result.value).toEqual({ path: h.abs('e'), type: 'directory' })
      expectError(await h.call('list', { path: 'e' }), `Error: cannot list "${h.abs('e')}": not found`, 'FS_NOT_FOUND')
      expectError(
        await h.call('delete', { path: 'd' }, S),
        `Error: cannot delete "${h.abs('d')}": directory not empty — delete its entries first; delete removes only files and empty directories`,
        'FS_NOT_EMPTY',
      )
      expect(h.peek('d/x.txt')).toBe('x\n')
    })

    it('a missing path is FS_NOT_FOUND; there is no recursive option', async () => {
      const h = setup()
      expectError(await h.call('delete', { path: 'nope.txt' }, S), `Error: cannot delete "${h.abs('nope.txt')}": not found`, 'FS_NOT_FOUND')
      expectError(await h.call('delete', { path: 'd', recursive: true }, S), 'Error: unknown argument "recursive" (allowed: path)')
      expect(h.peek('d/x.txt')).toBe('x\n')
    })

    it('quotes a path that could forge the text, in the success and in the refusal', async () => {
      const h = setup({ files: { 'a\nb': 'x\n' } })
      const quoted = JSON.stringify(h.abs('a\nb'))
      expectError(await h.call('delete', { path: 'a\nb' }, S), `Error: remove requires reading ${quoted} first${OBSERVE}`, 'FS_NOT_OBSERVED')
      expectOk(await h.call('read', { file_path: 'a\nb' }, S))
      expect(expectOk(await h.call('delete', { path: 'a\nb' }, S))).toBe(`Deleted file ${quoted}.`)
    })

    it('without a policy a file is deleted unread', async () => {
      const h = setup({ policy: undefined })
      expect(expectOk(await h.call('delete', { path: 'a.txt' }))).toBe(`Deleted file "${h.abs('a.txt')}".`)
    })
  })

  describe('move', () => {
    it('moves a file the session read: exact text and value; the destination is recorded (an edit follows unread), the source absent', async () => {
      const h = setup()
      expectOk(await h.call('read', { file_path: 'a.txt' }, S))
      const result = await h.call('move', { source_path: 'a.txt', destination_path: 'sub/deeper/c.txt' }, S)
      expect(expectOk(result)).toBe(`Moved file "${h.abs('a.txt')}" to "${h.abs('sub/deeper/c.txt')}".`)
      expect(result.value).toEqual({ from: h.abs('a.txt'), to: h.abs('sub/deeper/c.txt'), type: 'file', replaced: false })
      expect([h.peek('a.txt'), h.peek('sub/deeper/c.txt')]).toEqual([undefined, 'alpha\n'])
      expectOk(await h.call('edit', { file_path: 'sub/deeper/c.txt', old_string: 'alpha', new_string: 'omega' }, S))
      expectError(
        await h.call('edit', { file_path: 'a.txt', old_string: 'a', new_string: 'b' }, S),
        `Error: cannot edit "${h.abs('a.txt')}": not found`,
        'FS_NOT_FOUND',
      )
    })

    it('an unread source is FS_NOT_OBSERVED with the read remedy; nothing moves', async () => {
      const h = setup()
      expectError(
        await h.call('move', { source_path: 'a.txt', destination_path: 'c.txt' }, S),
        `Error: move requires reading "${h.abs('a.txt')}" first${OBSERVE}`,
        'FS_NOT_OBSERVED',
      )
      expect([h.peek('a.txt'), h.peek('c.txt')]).toEqual(['alpha\n', undefined])
    })

    it('onto an existing file the session has not read: FS_NOT_OBSERVED with a remedy; both stay', async () => {
      const h = setup()
      expectOk(await h.call('read', { file_path: 'a.txt' }, S))
      expectError(
        await h.call('move', { source_path: 'a.txt', destination_path: 'b.txt' }, S),
        `Error: cannot move onto existing "${h.abs('b.txt')}" — read it first to replace it, or choose another destination_path`,
        'FS_NOT_OBSERVED',
      )
      expect([h.peek('a.txt'), h.peek('b.txt')]).toEqual(['alpha\n', 'bee\n'])
    })

    it('after reading both, the destination is replaced, and the text says so', async () => {
      const h = setup()
      expectOk(await h.call('read', { file_path: 'a.txt' }, S))
      expectOk(await h.call('read', { file_path: 'b.txt' }, S))
      const result = await h.call('move', { source_path: 'a.txt', destination_path: 'b.txt' }, S)
      expect(expectOk(result)).toBe(`Moved file "${h.abs('a.txt')}" to "${h.abs('b.txt')}", replacing the file that was there.`)
      expect(result.value).toEqual({ from: h.abs('a.txt'), to: h.abs('b.txt'), type: 'file', replaced: true })
      expect([h.peek('a.txt'), h.peek('b.txt')]).toEqual([undefined, 'alpha\n'])
    })

    it('a destination changed after the read is stale; nothing moves', async () => {
      const h = setup()
      expectOk(await h.call('read', { file_path: 'a.txt' }, S))
      expectOk(await h.call('read', { file_path: 'b.txt' }, S))
      h.put('b.txt', 'theirs\n')
      const result = await h.call('move', { source_path: 'a.txt', destination_path: 'b.txt' }, S)
      expect(result.code).toBe('FS_STALE_VERSION')
      expect(result.text.endsWith(REREAD)).toBe(true)
      expect([h.peek('a.txt'), h.peek('b.txt')]).toEqual(['alpha\n', 'theirs\n'])
    })

    it('a source changed after the read is FS_STALE_VERSION with the re-read remedy; nothing moves', async () => {
      const h = setup()
      expectOk(await h.call('read', { file_path: 'a.txt' }, S))
      h.put('a.txt', 'changed\n')
      expectError(
        await h.call('move', { source_path: 'a.txt', destination_path: 'c.txt' }, S),
        `Error: cannot move "${h.abs('a.txt')}": file changed since it was read${REREAD}`,
        'FS_STALE_VERSION',
      )
      expect([h.peek('a.txt'), h.peek('c.txt')]).toEqual(['changed\n', undefined])
    })

    it('onto a directory: refused, naming the path inside it the model may have meant', async () => {
      const h = setup()
      expectOk(await h.call('read', { file_path: 'a.txt' }, S))
      expectError(
        await h.call('move', { source_path: 'a.txt', destination_path: 'd' }, S),
        `Error: cannot move onto existing "${h.abs('d')}": it is a directory — to move into it, give the full new path ("${h.abs('d/a.txt')}")`,
        // Not FS_NOT_OBSERVED: no read helps, another path does.
        'FS_NOT_REGULAR_FILE',
      )
      expect(expectOk(await h.call('move', { source_path: 'a.txt', destination_path: 'd/a.txt' }, S))).toBe(
        `Moved file "${h.abs('a.txt')}" to "${h.abs('d/a.txt')}".`,
      )
    })

    it.runIf(capabilitiesOf(kind).renameDirectories === true)('a directory moves without a read, never onto an existing path', async () => {
      const h = setup()
      const result = await h.call('move', { source_path: 'd', destination_path: 'moved/d2' }, S)
      expect(expectOk(result)).toBe(`Moved directory "${h.abs('d')}" to "${h.abs('moved/d2')}".`)
      expect(result.value).toEqual({ from: h.abs('d'), to: h.abs('moved/d2'), type: 'directory', replaced: false })
      expect(h.peek('moved/d2/x.txt')).toBe('x\n')
      // onto an existing file, even one the session read: refused
      expectOk(await h.call('read', { file_path: 'b.txt' }, S))
      expectError(
        await h.call('move', { source_path: 'moved', destination_path: 'b.txt' }, S),
        `Error: cannot move onto existing "${h.abs('b.txt')}" — read it first to replace it, or choose another destination_path`,
        'FS_NOT_OBSERVED',
      )
      expect(h.peek('b.txt')).toBe('bee\n')
      expectError(
        await h.call('move', { source_path: 'moved', destination_path: 'moved/inner' }, S),
        `Error: cannot move "${h.abs('moved')}": cannot move a directory into itself ("${h.abs('moved/inner')}")`,
        'FS_UNSUPPORTED',
      )
    })

    it('one file under two names: nothing is moved, and the text says so', async () => {
      const h = setup()
      expectOk(await h.call('read', { file_path: 'a.txt' }, S))
      expect(expectOk(await h.call('move', { source_path: 'a.txt', destination_path: './a.txt' }, S))).toBe(
        `"${h.abs('a.txt')}" and "${h.abs('a.txt')}" are the same file; nothing was moved.`,
      )
      expect(h.peek('a.txt')).toBe('alpha\n')
    })

    it('a missing source is FS_NOT_FOUND', async () => {
      const h = setup()
      expectError(
        await h.call('move', { source_path: 'nope', destination_path: 'c.txt' }, S),
        `Error: cannot move "${h.abs('nope')}": not found`,
        'FS_NOT_FOUND',
      )
    })

    it('without a policy a file moves unread and replaces an existing file, as write does', async () => {
      const h = setup({ policy: undefined })
      expect(expectOk(await h.call('move', { source_path: 'a.txt', destination_path: 'b.txt' }))).toBe(
        `Moved file "${h.abs('a.txt')}" to "${h.abs('b.txt')}", replacing the file that was there.`,
      )
      expect(h.peek('b.txt')).toBe('alpha\n')
    })
  })

  describe('create_directory', () => {
    it('creates missing parents; an existing directory is success, saying nothing changed', async () => {
      const h = setup()
      const made = await h.call('create_directory', { path: 'n/m' }, S)
      expect(expectOk(made)).toBe(`Created directory "${h.abs('n/m')}".`)
      expect(made.value).toEqual({ path: h.abs('n/m'), created: true })
      const again = await h.call('create_directory', { path: 'n/m' }, S)
      expect(expectOk(again)).toBe(`Directory "${h.abs('n/m')}" already exists; nothing changed.`)
      expect(again.value).toEqual({ path: h.abs('n/m'), created: false })
      expect(expectOk(await h.call('list', { path: 'n/m' }))).toContain('(Empty directory)')
    })

    it('a file at the path is FS_NOT_DIRECTORY and stays', async () => {
      const h = setup()
      expectError(
        await h.call('create_directory', { path: 'a.txt' }, S),
        `Error: cannot create directory "${h.abs('a.txt')}": not a directory`,
        'FS_NOT_DIRECTORY',
      )
      expect(h.peek('a.txt')).toBe('alpha\n')
    })
  })
})

/** A memory backend that declares fewer capabilities than it has. */
function limited(capabilities: { readonly [K in keyof FsCapabilities]?: FsCapabilities[K] | undefined }): MemoryFileSystem {
  const fs = new MemoryFileSystem({ cwd: '/w', files: { 'a.txt': 'a\n', 'd/x': 'x' } })
  Object.defineProperty(fs, 'capabilities', { value: { ...fs.capabilities, ...capabilities } })
  return fs
}

const names = (tools: readonly FileTool[]): string[] => tools.map((t) => t.name)

describe('which tools a backend is offered', () => {
  it('all three after the ten file tools where the backend has the capabilities', () => {
    expect(names(createFileTools({ fs: new MemoryFileSystem() }))).toEqual([
      'list',
      'read',
      'write',
      'edit',
      'glob',
      'grep',
      'read_files',
      'tree',
      'info',
      'list_roots',
      'create_directory',
      'move',
      'delete',
    ])
  })

  it('none of them where the backend lacks the capabilities (not offered, rather than FS_UNSUPPORTED on every call)', () => {
    const fs = limited({ remove: false, rename: undefined, createDirectory: undefined })
    expect(names(createFileTools({ fs }))).toEqual(['list', 'read', 'write', 'edit', 'glob', 'grep', 'read_files', 'tree', 'info', 'list_roots'])
    expect(names(createFileTools({ fs: limited({ remove: undefined }) }))).not.toContain('delete')
  })

  it('keyed by name: each key is its tool name, in the list order, optional tools only with the capability, one session per call', async () => {
    const fs = new MemoryFileSystem({ cwd: '/w', files: { 'a.txt': 'one\n' } })
    const policy = new ObservationPolicy()
    const byName = createFileToolsByName({ fs, policy })
    expect(Object.keys(byName)).toEqual(names(createFileTools({ fs })))
    for (const [key, tool] of Object.entries(byName as unknown as Readonly<Record<string, FileTool>>)) expect(tool.name).toBe(key)
    expect(Object.isFrozen(byName)).toBe(true)
    const few = createFileToolsByName({ fs: limited({ remove: false, rename: undefined, createDirectory: undefined }) })
    expect(Object.keys(few)).toEqual(['list', 'read', 'write', 'edit', 'glob', 'grep', 'read_files', 'tree', 'info', 'list_roots'])
    expect(few.delete).toBeUndefined()
    // the read of one tool set is that set's own session's: another set on the same policy has not read it
    expect((await byName.read.execute({ file_path: 'a.txt' })).isError).toBe(false)
    const other = createFileToolsByName({ fs, policy })
    expect((await other.edit.execute({ file_path: 'a.txt', old_string: 'one', new_string: 'two' })).code).toBe('FS_NOT_OBSERVED')
    const edit = await byName.edit.execute({ file_path: 'a.txt', old_string: 'one', new_string: 'two' })
    expect(edit.value?.after).toBe('two\n')
  })

  it('move of a directory where the backend renames files only: FS_UNSUPPORTED, and the schema and prompt speak of files', async () => {
    const fs = limited({ renameDirectories: false })
    const move = createFileTools({ fs }).find((t) => t.name === 'move') as FileTool
    expect(move.description).toBe('Move or rename a file; an existing destination is never replaced unread.')
    expect(JSON.stringify(move.inputSchema)).not.toContain('directory')
    expectError(
      await move.execute({ source_path: 'd', destination_path: 'e' }),
      'Error: cannot move "/w/d": this store moves files only, not directories',
      'FS_UNSUPPORTED',
    )
    expect(fs.toJSON()).toEqual({ 'a.txt': 'a\n', 'd/x': 'x' })
  })

  it('the three have closed schemas and annotations: delete and move destructive, create_directory not', () => {
    const tools = Object.fromEntries(createFileTools({ fs: new MemoryFileSystem() }).map((t) => [t.name, t]))
    expect(tools['delete']?.inputSchema).toMatchObject({ required: ['path'], additionalProperties: false })
    expect(tools['move']?.inputSchema).toMatchObject({ required: ['source_path', 'destination_path'], additionalProperties: false })
    expect(tools['create_directory']?.inputSchema).toMatchObject({ required: ['path'], additionalProperties: false })
    expect(tools['delete']?.annotations).toMatchObject({ readOnlyHint: false, destructiveHint: true, idempotentHint: true })
    expect(tools['move']?.annotations).toMatchObject({ readOnlyHint: false, destructiveHint: true, idempotentHint: false })
    expect(tools['create_directory']?.annotations).toMatchObject({ readOnlyHint: false, destructiveHint: false, idempotentHint: true })
  })
})

describe('behind the sandbox fence (workspace-write on /w/ws)', () => {
  const WS = '/w/ws'
  function fenced(mode: 'workspace-write' | 'read-only' = 'workspace-write'): {
    fs: MemoryFileSystem
    call: (name: string, args: unknown) => Promise<ToolResult>
  } {
    const fs = new MemoryFileSystem({ cwd: WS, files: { 'in.txt': 'in\n', '.git/config': 'c\n', 'e/': null } })
    fs.volume.writeFileSync('/w/out.txt', 'out\n')
    const sandboxed = new SandboxedFileSystem(fs, { mode, workspaceRoot: WS, confineReads: false })
    const tools = Object.fromEntries(createFileTools({ fs: sandboxed, policy: new ObservationPolicy(), cwd: WS }).map((t) => [t.name, t]))
    return { fs, call: (name, args) => (tools[name] as FileTool).execute(args, S) }
  }
  // A denial names where changes may go.
  const DENIED = `file access denied under workspace-write mode; changes must lie under "${WS}"`

  it('a delete outside the workspace is FS_SANDBOX_DENIED, after a read too', async () => {
    const { fs, call } = fenced()
    expectOk(await call('read', { file_path: '../out.txt' }))
    expectError(await call('delete', { path: '../out.txt' }), `Error: cannot delete "/w/out.txt": ${DENIED}`, 'FS_SANDBOX_DENIED')
    expect(fs.volume.readFileSync('/w/out.txt', 'utf8')).toBe('out\n')
  })

  it('a move needs both ends inside: out of the workspace and into it are denied; both names stay', async () => {
    const { fs, call } = fenced()
    expectOk(await call('read', { file_path: 'in.txt' }))
    expectOk(await call('read', { file_path: '../out.txt' }))
    expectError(
      await call('move', { source_path: 'in.txt', destination_path: '../moved.txt' }),
      `Error: cannot move "/w/moved.txt": ${DENIED}`,
      'FS_SANDBOX_DENIED',
    )
    expectError(
      await call('move', { source_path: '../out.txt', destination_path: 'moved.txt' }),
      `Error: cannot move "/w/out.txt": ${DENIED}`,
      'FS_SANDBOX_DENIED',
    )
    expect([fs.volume.existsSync('/w/ws/in.txt'), fs.volume.existsSync('/w/out.txt'), fs.volume.existsSync('/w/moved.txt')]).toEqual([true, true, false])
  })

  it('create_directory outside is denied; protected names stay protected; read-only mode denies all three', async () => {
    const { call } = fenced()
    expectError(await call('create_directory', { path: '../made' }), `Error: cannot create directory "/w/made": ${DENIED}`, 'FS_SANDBOX_DENIED')
    expectOk(await call('read', { file_path: '.git/config' }))
    expect((await call('delete', { path: '.git/config' })).code).toBe('FS_SANDBOX_DENIED')
    const ro = fenced('read-only')
    expectOk(await ro.call('read', { file_path: 'in.txt' }))
    expectError(
      await ro.call('delete', { path: 'in.txt' }),
      `Error: cannot delete "${WS}/in.txt": file access denied under read-only mode (this session cannot change files)`,
      'FS_SANDBOX_DENIED',
    )
    expectError(
      await ro.call('delete', { path: 'e' }),
      `Error: cannot delete "${WS}/e": file access denied under read-only mode (this session cannot change files)`,
      'FS_SANDBOX_DENIED',
    )
    expect((await ro.call('move', { source_path: 'in.txt', destination_path: 'x.txt' })).code).toBe('FS_SANDBOX_DENIED')
    expect((await ro.call('create_directory', { path: 'n' })).code).toBe('FS_SANDBOX_DENIED')
    expect(ro.fs.volume.existsSync(`${WS}/in.txt`)).toBe(true)
  })
})

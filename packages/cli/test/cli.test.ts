/**
 * `seamfs` end to end: every command runs the BUILT bin in a child process,
 * with a fresh temporary cwd and a clean temporary HOME. Local files live in
 * the cwd; the memory backend is seeded by a seamfs.config.json in the cwd
 * (each child has its own memory, so memory results are checked on stdout).
 */
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs'
import { dirname, join } from 'node:path'
import { pathToFileURL } from 'node:url'
import { afterAll, afterEach, beforeEach, describe, expect, it } from 'vitest'
import { Client } from '@modelcontextprotocol/sdk/client/index.js'
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js'
import { ListRootsRequestSchema, type CallToolResult } from '@modelcontextprotocol/sdk/types.js'
import { BIN, builtTitle, isAlive, missingBuild, removeTempDirs, runBin, tempDir, type RunResult } from './support.js'

const FILES: Record<string, string> = {
  'a.txt': 'one\ntwo\nthree\n',
  'src/b.ts': 'export const two = 2\n',
  'src/c.md': 'two words\nno match here\n',
}

const envelope = (path: string, type: 'file' | 'directory', body: readonly string[], footer: string): string =>
  `<path>${path}</path>\n<type>${type}</type>\n<content>\n${body.length === 0 ? '' : `${body.join('\n')}\n\n`}${footer}\n</content>\n`

/** Writes `files` under `dir` on disk. */
function seed(dir: string, files: Record<string, string>): void {
  for (const [rel, text] of Object.entries(files)) {
    mkdirSync(dirname(join(dir, rel)), { recursive: true })
    writeFileSync(join(dir, rel), text)
  }
}

/** A failed tool call: exit 1, nothing on stdout, the tool's message and its code on stderr. */
function expectToolError(r: RunResult, message: string, code: string): void {
  expect(r).toMatchObject({ code: 1, stdout: '', stderr: `${message} [${code}]\n` })
}

/**
 * `r` without the serving line a mounting command prints first on stderr (checked against
 * `expected` when given); a command that mounts nothing (usage errors, help) prints none.
 */
function unserved(r: RunResult, expected?: string): RunResult {
  if (!r.stderr.startsWith('seamfs: serving ')) return r
  const line = r.stderr.slice(0, r.stderr.indexOf('\n') + 1)
  if (expected !== undefined) expect(line).toBe(expected)
  return { ...r, stderr: r.stderr.slice(line.length) }
}

afterAll(removeTempDirs)

describe.skipIf(missingBuild.length > 0)(builtTitle('seamfs commands in a child process'), () => {
  describe.each(['local', 'memory'] as const)('tool commands on %s', (kind) => {
    let cwd = ''
    let home = ''
    /** The display path of a workspace file. */
    const abs = (rel: string): string => (kind === 'local' ? `${cwd}/${rel}` : `/${rel}`)
    const root = (): string => (kind === 'local' ? cwd : '/')
    /** The line every mounting command prints first on stderr: what it serves, and the fence. */
    const serving = (): string =>
      `seamfs: serving ${kind === 'local' ? `local disk at ${cwd}` : 'memory'}; workspace-write in the root, reads confined to it; read-before-write off\n`
    const run = async (args: readonly string[], input?: string): Promise<RunResult> =>
      unserved(await runBin(args, { cwd, home, ...(input === undefined ? {} : { input }) }), serving())

    beforeEach(() => {
      cwd = tempDir(kind)
      home = tempDir('home')
      if (kind === 'local') seed(cwd, FILES)
      else writeFileSync(join(cwd, 'seamfs.config.json'), JSON.stringify({ backend: { type: 'memory', files: FILES } }))
    })

    it('ls: the workspace and a subdirectory, exactly', async () => {
      expect(await run(['ls'])).toEqual({
        code: 0,
        signal: null,
        stderr: '',
        stdout: envelope(root(), 'directory', ['src/', 'a.txt'], '(2 entries: 1 directory, 1 file)'),
      })
      expect((await run(['ls', 'src'])).stdout).toBe(envelope(abs('src'), 'directory', ['b.ts', 'c.md'], '(2 entries: 0 directories, 2 files)'))
      expect((await run(['ls', 'src', '--offset', '2'])).stdout).toBe(
        envelope(abs('src'), 'directory', ['c.md'], '(Showing entries 2-2 of 2: 0 directories, 2 files.)'),
      )
      expectToolError(await run(['ls', 'nope']), `Error: cannot list "${abs('nope')}": not found`, 'FS_NOT_FOUND')
    })

    it('read: whole, and a window with --offset/--limit, exactly', async () => {
      expect(await run(['read', 'a.txt'])).toEqual({
        code: 0,
        signal: null,
        stderr: '',
        stdout: envelope(abs('a.txt'), 'file', ['1: one', '2: two', '3: three'], '(End of file - total 3 lines)'),
      })
      expect((await run(['read', 'a.txt', '--offset', '2', '--limit', '1'])).stdout).toBe(
        envelope(abs('a.txt'), 'file', ['2: two'], '(Showing lines 2-2 of 3. Use offset=3 to continue.)'),
      )
      expect((await run(['read', abs('a.txt'), '--limit', '2'])).stdout).toBe(
        envelope(abs('a.txt'), 'file', ['1: one', '2: two'], '(Showing lines 1-2 of 3. Use offset=3 to continue.)'),
      )
    })

    it('read of a missing file, or past the end: exit 1, Error: … [CODE] on stderr', async () => {
      expectToolError(await run(['read', 'missing.txt']), `Error: cannot read "${abs('missing.txt')}": not found`, 'FS_NOT_FOUND')
      expectToolError(await run(['read', 'a.txt', '--offset', '9']), `Error: offset 9 is out of range for "${abs('a.txt')}" (3 lines)`, 'FS_NOT_FOUND')
      expectToolError(await run(['read', 'src']), `Error: cannot read "${abs('src')}": not a regular file`, 'FS_NOT_REGULAR_FILE')
    })

    it('write: the content comes from stdin; creates, then replaces', async () => {
      const created = await run(['write', 'new/n.txt'], 'hello\nworld\n')
      expect(created).toEqual({
        code: 0,
        signal: null,
        stderr: '',
        stdout: `<path>${abs('new/n.txt')}</path>\n<type>file</type>\n<content>\nCreated file\n</content>\n`,
      })
      // One-shot commands run without the policy: replacing a file needs no read first.
      const updated = await run(['write', 'a.txt'], '')
      // The result shows what changed: a compact diff, after the success line.
      expect(updated.stdout).toBe(
        `<path>${abs('a.txt')}</path>\n<type>file</type>\n<content>\nUpdated file\n\n@@ -1,3 +0,0 @@\n-one\n-two\n-three\n</content>\n`,
      )
      if (kind === 'local') {
        expect(readFileSync(join(cwd, 'new/n.txt'), 'utf8')).toBe('hello\nworld\n')
        expect(readFileSync(join(cwd, 'a.txt'), 'utf8')).toBe('')
      }
    })

    it('mkdir, mv and rm: the create_directory, move and delete tools, exactly (each command on the seeded files)', async () => {
      const ok = (stdout: string): RunResult => ({ code: 0, signal: null, stderr: '', stdout: `${stdout}\n` })
      expect(await run(['mkdir', 'new/deep'])).toEqual(ok(`Created directory "${abs('new/deep')}".`))
      expect(await run(['mkdir', 'src'])).toEqual(ok(`Directory "${abs('src')}" already exists; nothing changed.`))
      expect(await run(['mv', 'a.txt', 'moved/a.txt'])).toEqual(ok(`Moved file "${abs('a.txt')}" to "${abs('moved/a.txt')}".`))
      expectToolError(
        await run(['rm', 'src']),
        `Error: cannot delete "${abs('src')}": directory not empty — delete its entries first; delete removes only files and empty directories`,
        'FS_NOT_EMPTY',
      )
      expect(await run(['rm', 'src/b.ts'])).toEqual(ok(`Deleted file "${abs('src/b.ts')}".`))
      expectToolError(await run(['rm', 'nope.txt']), `Error: cannot delete "${abs('nope.txt')}": not found`, 'FS_NOT_FOUND')
      if (kind === 'local') {
        expect(readFileSync(join(cwd, 'moved/a.txt'), 'utf8')).toBe('one\ntwo\nthree\n')
        expect([existsSync(join(cwd, 'a.txt')), existsSync(join(cwd, 'src/b.ts')), existsSync(join(cwd, 'new/deep'))]).toEqual([false, false, true])
        const outside = join(tempDir('outside'), 'outside.txt')
        writeFileSync(outside, 'keep')
        expectToolError(
          await run(['rm', outside]),
          `Error: cannot delete "${outside}": outside the sandbox roots; use a path under "${cwd}"`,
          'FS_SANDBOX_DENIED',
        )
        expectToolError(
          await run(['mv', outside, 'in.txt']),
          `Error: cannot move "${outside}": outside the sandbox roots; use a path under "${cwd}"`,
          'FS_SANDBOX_DENIED',
        )
        expect(readFileSync(outside, 'utf8')).toBe('keep')
      }
    })

    it('edit: --old/--new, --all, and the edit errors', async () => {
      expect(await run(['edit', 'a.txt', '--old', 'two', '--new', 'TWO'])).toEqual({
        code: 0,
        signal: null,
        stderr: '',
        stdout: `The file ${abs('a.txt')} has been updated successfully.\n\n@@ -1,3 +1,3 @@\n one\n-two\n+TWO\n three\n`,
      })
      if (kind === 'local') expect(readFileSync(join(cwd, 'a.txt'), 'utf8')).toBe('one\nTWO\nthree\n')
      // Each memory child starts from the config's files, so `e` still occurs three times there.
      const all = await run(['edit', 'a.txt', '--old', 'e', '--new', 'E', '--all'])
      const middle = kind === 'local' ? 'TWO' : 'two'
      expect(all.stdout).toBe(
        `The file ${abs('a.txt')} has been updated. All occurrences were successfully replaced.\n\n@@ -1,3 +1,3 @@\n-one\n+onE\n ${middle}\n-three\n+thrEE\n`,
      )
      if (kind === 'local') expect(readFileSync(join(cwd, 'a.txt'), 'utf8')).toBe('onE\nTWO\nthrEE\n')
      expectToolError(
        await run(['edit', 'src/c.md', '--old', 'o', '--new', '0']),
        `Error: old_string matched 3 times in "${abs('src/c.md')}"; provide a more specific old_string or set replace_all to true`,
        'FS_AMBIGUOUS_EDIT',
      )
      expectToolError(
        await run(['edit', 'src/c.md', '--old', 'absent', '--new', 'x']),
        `Error: old_string was not found in "${abs('src/c.md')}"`,
        'FS_EDIT_NOT_FOUND',
      )
    })

    it('glob: a pattern, in path order, under a path', async () => {
      expect(await run(['glob', '**/*.{ts,md}'])).toEqual({ code: 0, signal: null, stderr: '', stdout: 'src/b.ts\nsrc/c.md\n' })
      expect((await run(['glob', '*.txt'])).stdout).toBe('a.txt\n')
      // Printed paths are relative to the cwd, not to the search root: read takes them back as they are.
      expect((await run(['glob', '*.md', 'src'])).stdout).toBe('src/c.md\n')
      expect((await run(['glob', '*.nope'])).stdout).toBe('No files found\n')
    })

    it('grep: a pattern, with --include', async () => {
      expect(await run(['grep', 'two', '--include', '*.md'])).toEqual({
        code: 0,
        signal: null,
        stderr: '',
        stdout: 'Found 1 match\n\nsrc/c.md\nLine 1: two words\n',
      })
      const all = await run(['grep', '^t'])
      expect(all.stdout).toBe('Found 3 matches\n\na.txt\nLine 2: two\nLine 3: three\n\nsrc/c.md\nLine 1: two words\n')
      expect((await run(['grep', 'zzz'])).stdout).toBe('No matches found\n')
    })
  })

  describe('config, usage and help', () => {
    let cwd = ''
    let home = ''
    const run = async (args: readonly string[], input?: string): Promise<RunResult> =>
      unserved(await runBin(args, { cwd, home, ...(input === undefined ? {} : { input }) }))
    beforeEach(() => {
      cwd = tempDir('cwd')
      home = tempDir('home')
      seed(cwd, { 'a.txt': 'one\n' })
    })

    it.each<[what: string, config: string, message: string]>([
      ['a wrong backend.root', '{"backend":{"type":"local","root":7}}', 'config: backend.root: expected a non-empty string, found the number 7'],
      [
        'an unknown backend.type',
        '{"backend":{"type":"ftp"}}',
        'config: backend.type: expected one of "local", "memory", "s3", "sftp", "module", found the string "ftp"',
      ],
      ['a missing local root', '{"backend":"file:./nowhere"}', 'config: backend.root: expected an existing directory, found the string "./nowhere"'],
      [
        'a password',
        '{"backend":{"type":"sftp","host":"h","username":"u","password":"s3cr3t"}}',
        'config: backend.password: expected no password in the config (use passwordEnv), found a password',
      ],
      [
        'a wrong tools setting',
        '{"backend":{"type":"memory"},"tools":{"readLimit":0}}',
        'config: tools.readLimit: expected a positive integer, found the number 0',
      ],
    ])('a config file with %s: exit 2 and the precise message', async (_what, config, message) => {
      writeFileSync(join(cwd, 'seamfs.config.json'), config)
      expect(await run(['ls'])).toEqual({ code: 2, signal: null, stdout: '', stderr: `seamfs: ${message}\n` })
    })

    it('a config file that is not JSON, or not there: exit 2', async () => {
      writeFileSync(join(cwd, 'broken.json'), '{"backend":')
      const broken = await run(['-c', 'broken.json', 'ls'])
      expect(broken.code).toBe(2)
      expect(broken.stderr).toMatch(/^seamfs: config: broken\.json: expected valid JSON, found the string ".+"\n$/)
      expect(await run(['--config', 'absent.json', 'ls'])).toMatchObject({
        code: 2,
        stdout: '',
        stderr: 'seamfs: config: --config: expected a readable config file, found the string "absent.json"\n',
      })
    })

    it('--config names another file; --fs file:<dir> overrides the backend of the config', async () => {
      seed(cwd, { 'other/o.txt': 'o\n' })
      writeFileSync(join(cwd, 'seamfs.config.json'), JSON.stringify({ backend: { type: 'memory', files: { 'm.txt': 'm' } } }))
      writeFileSync(join(cwd, 'alt.json'), JSON.stringify({ backend: { type: 'memory', files: { 'alt.txt': 'x' } } }))
      expect((await run(['ls'])).stdout).toBe(envelope('/', 'directory', ['m.txt'], '(1 entry: 0 directories, 1 file)'))
      expect((await run(['-c', 'alt.json', 'ls'])).stdout).toBe(envelope('/', 'directory', ['alt.txt'], '(1 entry: 0 directories, 1 file)'))
      const other = join(cwd, 'other')
      expect((await run(['--fs', `file:${other}`, 'ls'])).stdout).toBe(envelope(other, 'directory', ['o.txt'], '(1 entry: 0 directories, 1 file)'))
      expect((await run(['--fs', 'file:other', 'read', 'o.txt'])).stdout).toBe(envelope(`${other}/o.txt`, 'file', ['1: o'], '(End of file - total 1 lines)'))
      expect((await run(['--fs', 'memory:', 'ls'])).stdout).toBe(envelope('/', 'directory', [], '(Empty directory)'))
      expect(await run(['--fs', 'ftp://h/x', 'ls'])).toMatchObject({
        code: 2,
        stderr: 'seamfs: config: --fs: expected file:, memory:, s3:// or sftp://, found the string "ftp://h/x"\n',
      })
      expect((await run(['--fs', 'sftp://u:pw@h/x', 'ls'])).stderr).toBe(
        'seamfs: config: --fs: expected no password in the URL (use an environment variable), found a password\n',
      )
    })

    it('--session FILE: a blind overwrite fails (FS_NOT_OBSERVED) until a read with the same session', async () => {
      const session = join(home, 'session.json')
      const blind = await run(['--session', session, 'write', 'a.txt'], 'clobber\n')
      expectToolError(blind, `Error: cannot overwrite existing "${cwd}/a.txt" without reading it first — read the file, then retry`, 'FS_NOT_OBSERVED')
      expect(readFileSync(join(cwd, 'a.txt'), 'utf8')).toBe('one\n')
      expectToolError(
        await run(['--session', session, 'edit', 'a.txt', '--old', 'one', '--new', '1']),
        `Error: edit requires reading "${cwd}/a.txt" first — read the file, then retry`,
        'FS_NOT_OBSERVED',
      )
      // Another session file knows nothing of this one's reads.
      expect((await run(['--session', session, 'read', 'a.txt'])).code).toBe(0)
      expect((await run(['--session', join(home, 'other.json'), 'write', 'a.txt'], 'x\n')).code).toBe(1)
      const w = await run(['--session', session, 'write', 'a.txt'], 'two\n')
      expect(w).toMatchObject({
        code: 0,
        stderr: '',
        stdout: `<path>${cwd}/a.txt</path>\n<type>file</type>\n<content>\nUpdated file\n\n@@ -1 +1 @@\n-one\n+two\n</content>\n`,
      })
      expect(readFileSync(join(cwd, 'a.txt'), 'utf8')).toBe('two\n')
      // Its own write counts as observed: an edit right after needs no read.
      expect((await run(['--session', session, 'edit', 'a.txt', '--old', 'two', '--new', 'three'])).code).toBe(0)
      expect(readFileSync(join(cwd, 'a.txt'), 'utf8')).toBe('three\n')
      expect(existsSync(join(cwd, 'session.json'))).toBe(false)
    })

    it("--paths workspace (or the config's paths): the model sees the root as /, and no host path; every path printed is one it takes", async () => {
      seed(cwd, { 'src/b.ts': 'export const two = 2\n' })
      const served = `seamfs: serving local disk at ${cwd}, shown as /; workspace-write in the root, reads confined to it; read-before-write off\n`
      const outputs: string[] = []
      for (const args of [['read', 'src/b.ts'], ['ls'], ['grep', 'two'], ['glob', '**/*.ts'], ['read', 'missing.txt'], ['read', '../outside.txt']]) {
        const r = await runBin(['--paths', 'workspace', ...args], { cwd, home })
        expect(r.stderr.startsWith(served), r.stderr).toBe(true)
        outputs.push(r.stdout, r.stderr.slice(served.length))
      }
      for (const out of outputs) expect(out).not.toContain(cwd)
      expect(outputs[0]).toContain('<path>/src/b.ts</path>')
      // A path it printed is one it takes.
      expect((await runBin(['--paths', 'workspace', 'read', '/src/b.ts'], { cwd, home })).stdout).toBe(outputs[0])
      writeFileSync(join(cwd, 'seamfs.config.json'), '{"backend":"file:.","paths":"workspace"}')
      expect((await run(['read', '/src/b.ts'])).stdout).toBe(outputs[0])
      writeFileSync(join(cwd, 'seamfs.config.json'), '{"backend":"file:.","paths":"host"}')
      expect(await run(['ls'])).toMatchObject({ code: 2, stderr: 'seamfs: config: paths: expected one of "store", "workspace", found the string "host"\n' })
    })

    it('grep -i and --include-ignored, glob --include-ignored, tree, info and ls -l', async () => {
      seed(cwd, { '.gitignore': 'build/\n', 'src/x.ts': 'Hello\n', 'build/out.js': 'hello\n' })
      expect((await run(['grep', 'hello'])).stdout).toMatch(/^No matches found\n\n\(1 path ignored by \.gitignore or \.ignore files skipped: "build"/)
      expect((await run(['grep', '-i', 'hello'])).stdout).toContain('src/x.ts\nLine 1: Hello')
      const all = await run(['grep', '--ignore-case', '--include-ignored', 'hello'])
      expect(all.stdout).toContain('Found 2 matches')
      expect((await run(['glob', '**/*.js'])).stdout).not.toContain('out.js')
      expect((await run(['glob', '--include-ignored', '**/*.js'])).stdout).toContain('out.js')
      expect((await run(['tree', 'src'])).stdout).toContain('x.ts')
      expect((await run(['info', 'src/x.ts'])).stdout).toContain('size: 6 bytes')
      expect((await run(['ls', '-l', 'src'])).stdout).toMatch(/\n *6 {2}\d{4}-\d\d-\d\dT[\d:]+Z {2}x\.ts\n/)
    })

    it("--audit FILE (or the config's audit): a JSON line per change and per refusal, numbered across commands; the model cannot touch the file", async () => {
      const audit = join(cwd, 'logs', 'audit.jsonl')
      mkdirSync(join(cwd, 'logs'))
      const served = await runBin(['--audit', 'logs/audit.jsonl', 'write', 'n.txt'], { cwd, home, input: 'new\n' })
      expect(served.stderr).toContain(`; audit log ${audit}\n`)
      expect((await run(['--audit', 'logs/audit.jsonl', 'rm', 'logs/audit.jsonl'])).code).toBe(1)
      expect((await run(['--audit', 'logs/audit.jsonl', 'write', 'logs/audit.jsonl'], 'forged\n')).code).toBe(1)
      // The files a rotation makes are the log's too: neither forged beforehand nor blocked with a directory.
      expect((await run(['--audit', 'logs/audit.jsonl', 'write', 'logs/audit.jsonl.1'], 'forged\n')).code).toBe(1)
      expect((await run(['--audit', 'logs/audit.jsonl', 'mkdir', 'logs/audit.jsonl.3/x'])).code).toBe(1)
      expect(existsSync(join(cwd, 'logs/audit.jsonl.1')) || existsSync(join(cwd, 'logs/audit.jsonl.3'))).toBe(false)
      writeFileSync(join(cwd, 'seamfs.config.json'), JSON.stringify({ backend: 'file:.', audit: { path: 'logs/audit.jsonl', keep: 1 } }))
      expect((await run(['mv', 'n.txt', 'm.txt'])).code).toBe(0)
      const lines = readFileSync(audit, 'utf8')
        .trim()
        .split('\n')
        .map((l) => JSON.parse(l) as Record<string, unknown>)
      expect(lines.map((l) => [l['seq'], l['kind'], l['verb'], l['code']])).toEqual([
        [1, 'create', 'write', undefined],
        [2, 'failed', 'remove', 'FS_SANDBOX_DENIED'],
        [3, 'failed', 'write', 'FS_SANDBOX_DENIED'],
        [4, 'failed', 'write', 'FS_SANDBOX_DENIED'],
        [5, 'failed', 'create directory', 'FS_SANDBOX_DENIED'],
        [6, 'rename', 'rename', undefined],
      ])
      expect(lines[0]).toMatchObject({ path: `${cwd}/n.txt`, bytes: 4, actor: 'cli' })
      writeFileSync(join(cwd, 'seamfs.config.json'), JSON.stringify({ backend: 'file:.', audit: { path: 'logs/audit.jsonl', maxBytes: 10 } }))
      expect(await run(['ls'])).toMatchObject({
        code: 2,
        stderr: 'seamfs: config: audit.maxBytes: expected an integer of at least 4096, found the number 10\n',
      })
    })

    it('--json: the result as one JSON object on stdout, a failure too (exit 1), with its code', async () => {
      const ok = await run(['read', 'a.txt', '--json'])
      expect(ok).toMatchObject({ code: 0, stderr: '' })
      expect(JSON.parse(ok.stdout)).toEqual({
        tool: 'read',
        isError: false,
        text: `<path>${cwd}/a.txt</path>\n<type>file</type>\n<content>\n1: one\n\n(End of file - total 1 lines)\n</content>`,
        value: expect.objectContaining({ path: `${cwd}/a.txt` }) as unknown,
      })
      expect(ok.stdout.endsWith('}\n') && ok.stdout.indexOf('\n') === ok.stdout.length - 1, 'one line').toBe(true)
      const missing = await run(['read', '--json', 'missing.txt'])
      expect(missing).toMatchObject({ code: 1, stderr: '' })
      expect(JSON.parse(missing.stdout)).toMatchObject({
        tool: 'read',
        isError: true,
        code: 'FS_NOT_FOUND',
        text: expect.stringMatching(/^Error: /) as unknown,
      })
      expect(JSON.parse(missing.stdout)).not.toHaveProperty('value')
    })

    it('-q: no serving line; warnings and errors still print', async () => {
      expect(await runBin(['ls', '-q'], { cwd, home })).toMatchObject({ code: 0, stderr: '' })
      const failed = await runBin(['read', 'missing.txt', '--quiet'], { cwd, home })
      expect(failed.code).toBe(1)
      expect(failed.stderr).toMatch(/^Error: .* \[FS_NOT_FOUND\]\n$/)
    })

    it('colour on stderr only when asked for or on a terminal, never with NO_COLOR or --no-color', async () => {
      const esc = '\u001b'
      const dim = new RegExp(`^${esc}\\[2mseamfs: serving .*${esc}\\[22m\\n`)
      const red = new RegExp(`${esc}\\[31mError: .*\\[FS_NOT_FOUND\\]${esc}\\[39m\\n$`)
      // A pipe is not a terminal: plain text.
      const plain = await runBin(['read', 'missing.txt'], { cwd, home })
      expect(plain.stderr).not.toContain('\u001b[')
      const forced = await runBin(['read', 'missing.txt'], { cwd, home, env: { FORCE_COLOR: '1' } })
      expect(forced.stderr).toMatch(dim)
      expect(forced.stderr).toMatch(red)
      expect(forced.stdout).toBe('')
      for (const [what, args, env] of [
        ['NO_COLOR', ['read', 'missing.txt'], { FORCE_COLOR: '1', NO_COLOR: '1' }],
        ['--no-color', ['--no-color', 'read', 'missing.txt'], { FORCE_COLOR: '1' }],
        ['FORCE_COLOR=0', ['read', 'missing.txt'], { FORCE_COLOR: '0' }],
      ] as const) {
        const r = await runBin(args, { cwd, home, env })
        expect(r.code, what).toBe(1)
        expect(r.stderr, what).not.toContain('\u001b[')
      }
      // stdout is the tool's text, never coloured.
      expect((await runBin(['read', 'a.txt'], { cwd, home, env: { FORCE_COLOR: '1' } })).stdout).not.toContain('\u001b[')
    })

    it('--help of the program and of each subcommand: exit 0', async () => {
      const top = await run(['--help'])
      expect(top).toMatchObject({ code: 0, stderr: '' })
      expect(top.stdout).toMatch(/^Usage: seamfs \[options\] \[command\]/)
      for (const command of ['ls', 'read', 'write', 'edit', 'glob', 'grep', 'conformance', 'mcp']) expect(top.stdout).toMatch(new RegExp(`\\n  ${command} `))
      expect(top.stdout).toContain('Exit codes:')
      const read = await run(['read', '--help'])
      expect(read).toMatchObject({ code: 0, stderr: '' })
      expect(read.stdout).toMatch(/^Usage: seamfs read \[options\] <file>\n/)
      expect(read.stdout).toContain('--offset <n>')
      expect(read.stdout).toContain('--limit <n>')
      const commands = ['ls', 'write', 'edit', 'glob', 'grep', 'conformance', 'mcp']
      const helps = await Promise.all(commands.map((command) => run([command, '--help'])))
      for (const [i, r] of helps.entries()) {
        expect(r.code, commands[i]).toBe(0)
        expect(r.stdout).toMatch(new RegExp(`^Usage: seamfs ${commands[i]} `))
      }
      expect((await run(['help', 'edit'])).stdout).toContain('--old <text>')
      expect(await run(['--version'])).toMatchObject({ code: 0, stdout: '0.1.0\n' })
    })

    it('usage errors: exit 2 with the reason on stderr', async () => {
      const unknown = await run(['frobnicate'])
      expect(unknown).toMatchObject({ code: 2, stdout: '' })
      expect(unknown.stderr).toMatch(/^error: unknown command 'frobnicate'/)
      expect((await run(['read'])).stderr).toMatch(/^error: missing required argument 'file'/)
      expect((await run(['read', 'a.txt', '--limit', '0'])).stderr).toMatch(
        /^error: option '--limit <n>' argument '0' is invalid\. expected a positive integer/,
      )
      expect((await run(['edit', 'a.txt', '--old', 'x'])).stderr).toMatch(/^error: required option '--new <text>' not specified/)
      const usages = [['read'], ['read', 'a.txt', '--limit', '0'], ['edit', 'a.txt', '--old', 'x'], ['ls', '--bogus'], []]
      const codes = await Promise.all(usages.map(async (args) => (await run(args)).code))
      expect(codes).toEqual(usages.map(() => 2))
      expect(readFileSync(join(cwd, 'a.txt'), 'utf8')).toBe('one\n')
    })
  })

  describe('seamfs mcp, driven by the MCP SDK client', () => {
    let root = ''
    let transport: StdioClientTransport | undefined
    let client: Client | undefined
    let pid: number | undefined

    afterEach(async () => {
      // Only when a test failed before closing: never leave the child behind.
      await client?.close().catch(() => undefined)
      if (pid !== undefined && isAlive(pid)) process.kill(pid, 'SIGKILL')
      client = transport = pid = undefined
    })

    const text = (r: CallToolResult): string => {
      const [first] = r.content
      if (first?.type !== 'text' || r.content.length !== 1) throw new Error(`expected one text block, got ${JSON.stringify(r.content)}`)
      return first.text
    }

    /** One MCP connection to a fresh `seamfs … mcp` child: `body` calls tools through it, then it is closed. */
    async function connection<T>(
      args: readonly string[],
      cwd: string,
      body: (call: (name: string, a: Record<string, unknown>) => Promise<CallToolResult>) => Promise<T>,
      roots?: readonly string[],
    ): Promise<T> {
      transport = new StdioClientTransport({
        command: process.execPath,
        args: [BIN, ...args],
        cwd,
        env: { ...(process.env as Record<string, string>), HOME: tempDir('home') },
        stderr: 'pipe',
      })
      client = new Client({ name: 'seamfs-cli-e2e', version: '0.0.0' }, roots === undefined ? {} : { capabilities: { roots: {} } })
      if (roots !== undefined) client.setRequestHandler(ListRootsRequestSchema, () => ({ roots: roots.map((path) => ({ uri: pathToFileURL(path).href })) }))
      await client.connect(transport)
      pid = transport.pid ?? undefined
      const c = client
      try {
        return await body(async (name, a) => (await c.callTool({ name, arguments: a })) as CallToolResult)
      } finally {
        await c.close()
        client = undefined
      }
    }

    it('--session: a server per call (as some clients run it) still edits what an earlier call read; without it, never', async () => {
      root = tempDir('mcp-session')
      const cwd = tempDir('mcp-cwd')
      writeFileSync(join(root, 'a.txt'), 'one\n')
      const session = join(cwd, 'session.json')
      const edit = { file_path: 'a.txt', old_string: 'one', new_string: 'two' }
      // Without --session, each server starts with no reads: the edit after a read in another server is refused.
      await connection(['--fs', `file:${root}`, 'mcp'], cwd, async (call) => expect((await call('read', { file_path: 'a.txt' })).isError).toBe(false))
      const refused = await connection(['--fs', `file:${root}`, 'mcp'], cwd, (call) => call('edit', edit))
      expect(refused._meta?.['seamfs/code']).toBe('FS_NOT_OBSERVED')
      // With it, the read of one server is the next one's.
      await connection(['--session', session, '--fs', `file:${root}`, 'mcp'], cwd, async (call) =>
        expect((await call('read', { file_path: 'a.txt' })).isError).toBe(false),
      )
      expect(existsSync(session)).toBe(true)
      const edited = await connection(['--session', session, '--fs', `file:${root}`, 'mcp'], cwd, (call) => call('edit', edit))
      expect(edited.isError, text(edited)).toBe(false)
      expect(readFileSync(join(root, 'a.txt'), 'utf8')).toBe('two\n')
      // A change behind its back is still caught: the session holds the version it read, not a pass.
      writeFileSync(join(root, 'a.txt'), 'theirs\n')
      const stale = await connection(['--session', session, '--fs', `file:${root}`, 'mcp'], cwd, (call) =>
        call('edit', { file_path: 'a.txt', old_string: 'theirs', new_string: 'mine' }),
      )
      expect(stale.isError).toBe(true)
      expect(readFileSync(join(root, 'a.txt'), 'utf8')).toBe('theirs\n')
    })

    it('a client that lists its roots is fenced to them, inside the served root (the MCP roots protocol)', async () => {
      root = tempDir('mcp-roots')
      const cwd = tempDir('mcp-cwd')
      seed(root, { 'sub/in.txt': 'inside\n', 'top.txt': 'top\n' })
      const outside = tempDir('mcp-outside')
      seed(outside, { 'secret.txt': 'secret\n' })
      const [inside, top, secret, made] = await connection(
        ['--fs', `file:${root}`, 'mcp'],
        cwd,
        async (call) => [
          await call('read', { file_path: 'in.txt' }),
          await call('read', { file_path: `${root}/top.txt` }),
          await call('read', { file_path: `${outside}/secret.txt` }),
          await call('write', { file_path: `${root}/made.txt`, content: 'x\n' }),
        ],
        [join(root, 'sub'), outside],
      )
      if (inside === undefined) throw new Error('no result')
      expect(inside.isError, text(inside)).toBe(false)
      expect(text(inside)).toContain('1: inside')
      for (const r of [top, secret, made]) expect(r?._meta?.['seamfs/code']).toBe('FS_SANDBOX_DENIED')
      expect(existsSync(join(root, 'made.txt'))).toBe(false)
    })

    it('--paths workspace: the roots a client lists (host paths) are seen from the tree', async () => {
      root = tempDir('mcp-roots-view')
      seed(root, { 'sub/in.txt': 'inside\n', 'top.txt': 'top\n' })
      const [inside, top] = await connection(
        ['--paths', 'workspace', '--fs', `file:${root}`, 'mcp'],
        tempDir('mcp-cwd'),
        async (call) => [await call('read', { file_path: 'in.txt' }), await call('read', { file_path: '/top.txt' })],
        [join(root, 'sub')],
      )
      if (inside === undefined) throw new Error('no result')
      expect(text(inside)).toBe('<path>/sub/in.txt</path>\n<type>file</type>\n<content>\n1: inside\n\n(End of file - total 1 lines)\n</content>')
      expect(top?._meta?.['seamfs/code']).toBe('FS_SANDBOX_DENIED')
      // A root this tree does not show (a host path outside it, or one that looks like a path of the
      // tree) reaches nothing: every call fails closed, naming no host path.
      const elsewhere = tempDir('mcp-elsewhere')
      for (const listed of [[elsewhere], ['/sub']]) {
        const [refused] = await connection(
          ['--paths', 'workspace', '--fs', `file:${root}`, 'mcp'],
          tempDir('mcp-cwd'),
          async (call) => [await call('read', { file_path: '/sub/in.txt' })],
          listed,
        )
        expect(refused?.isError, String(listed)).toBe(true)
        expect(refused && text(refused)).toContain('none of the roots the client lists is in what this server serves (/)')
        expect(refused && text(refused)).not.toContain(root)
      }
    })

    it('lists the tools, writes and reads on local disk; closing the client ends the child', async () => {
      root = tempDir('mcp')
      const cwd = tempDir('mcp-cwd')
      const home = tempDir('home')
      let stderr = ''
      transport = new StdioClientTransport({
        command: process.execPath,
        args: [BIN, '--fs', `file:${root}`, 'mcp'],
        cwd,
        env: { ...(process.env as Record<string, string>), HOME: home },
        stderr: 'pipe',
      })
      transport.stderr?.on('data', (chunk) => (stderr += String(chunk)))
      client = new Client({ name: 'seamfs-cli-e2e', version: '0.0.0' })
      await client.connect(transport)
      pid = transport.pid ?? undefined
      expect(pid).toBeTypeOf('number')
      expect(client.getServerVersion()).toMatchObject({ name: 'seamfs', version: '0.1.0' })

      const { tools } = await client.listTools()
      expect(tools.map((t) => t.name).sort()).toEqual([
        'create_directory',
        'delete',
        'edit',
        'glob',
        'grep',
        'info',
        'list',
        'list_roots',
        'move',
        'read',
        'read_files',
        'tree',
        'write',
      ])

      const call = async (name: string, args: Record<string, unknown>): Promise<CallToolResult> =>
        (await (client as Client).callTool({ name, arguments: args })) as CallToolResult
      const w = await call('write', { file_path: 'notes/a.txt', content: 'alpha\nbeta\n' })
      expect(w.isError).toBe(false)
      expect(text(w)).toBe(`<path>${root}/notes/a.txt</path>\n<type>file</type>\n<content>\nCreated file\n</content>`)
      expect(readFileSync(join(root, 'notes/a.txt'), 'utf8')).toBe('alpha\nbeta\n')
      const r = await call('read', { file_path: 'notes/a.txt' })
      expect(text(r)).toBe(`<path>${root}/notes/a.txt</path>\n<type>file</type>\n<content>\n1: alpha\n2: beta\n\n(End of file - total 2 lines)\n</content>`)
      // The MCP server is one long session: the policy is on, so a blind overwrite is refused.
      writeFileSync(join(root, 'outside.txt'), 'theirs\n')
      const blind = await call('write', { file_path: 'outside.txt', content: 'mine\n' })
      expect(blind.isError).toBe(true)
      expect(blind._meta?.['seamfs/code']).toBe('FS_NOT_OBSERVED')
      expect(readFileSync(join(root, 'outside.txt'), 'utf8')).toBe('theirs\n')
      expect(existsSync(join(cwd, 'notes'))).toBe(false)

      const child = pid as number
      expect(isAlive(child)).toBe(true)
      const started = Date.now()
      await client.close()
      client = undefined
      // It exits because stdin closed, not by the SDK's SIGTERM after its 2 s grace.
      expect(Date.now() - started).toBeLessThan(2000)
      expect(isAlive(child)).toBe(false)
      // One line on stderr, before anything else: what it serves and how it is fenced.
      expect(stderr).toBe(`seamfs: serving local disk at ${root}; workspace-write in the root, reads confined to it; read-before-write on\n`)
    })
  })
})

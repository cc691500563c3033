/**
 * A seamfs writer in a process of its own, for test/multi-process.test.ts: plain `node` on this
 * file, the BUILT package (`npx tsc -b` first). Its job comes as JSON in SEAMFS_WORKER:
 * `{ server, root, mode, name, sessions, durationMs, files, ... }`; it prints one JSON line of
 * results on stdout and exits by itself (`durationMs`), or is killed by the test (`write-big`,
 * `edit-loop`: they run until then).
 *
 * Modes:
 * - `edit`: `sessions` loops, each on its own SftpFileSystem (its own connection): pick a file of
 *   `files`, stat it, edit it under that version, appending the line `<name>-s<session>-<n>`
 *   before the closing `END` line; report every edit that succeeded, and failures by code;
 * - `shuffle`: loops that move a file to another of its names (no overwrite), remove it (under its
 *   version) and create it again (createIfAbsent) with what they read, or edit it as above;
 *   `files` are identities `f<i>`, each at one of the names `f<i>-<k>.txt`;
 * - `write-big`: writes `bytes` bytes to `file` again and again (until killed);
 * - `edit-loop`: edits `file` again and again (until killed).
 */
/* global process, console */
// SEAMFS_WORKER_DIST: another build to measure against (a path to its index.js); the package's own by default.
const { SftpFileSystem } = await import(process.env.SEAMFS_WORKER_DIST ?? '../dist/index.js')

const job = JSON.parse(process.env.SEAMFS_WORKER ?? '{}')
const { server, root, mode, name } = job
const deadline = Date.now() + (job.durationMs ?? 0)

const open = (extra = {}) =>
  new SftpFileSystem({ host: server.host, port: server.port, username: server.username, privateKey: server.privateKey, acceptAnyHostKey: true, root, ...extra })

const codeOf = (err) => (err !== null && typeof err === 'object' && typeof err.code === 'string' ? err.code : String(err))

/** Appends `line` before the closing END line of the file at `path`, guarded by the version just read. */
async function append(fs, path, line) {
  const target = await fs.resolve(path)
  const info = await fs.stat(target)
  if (info?.type !== 'file') throw Object.assign(new Error(`${path} is ${info?.type ?? 'absent'}`), { code: 'ABSENT' })
  await fs.editText(target, { oldString: 'END\n', newString: `${line}\nEND\n`, replaceAll: false }, { expected: { version: info.version } })
}

async function editLoop(fs, session, out) {
  for (let n = 0; Date.now() < deadline; n++) {
    const file = job.files[(session + n) % job.files.length]
    const line = `${name}-s${session}-${n}`
    try {
      await append(fs, file, line)
      out.ok.push([file, line])
    } catch (err) {
      out.failed[codeOf(err)] = (out.failed[codeOf(err)] ?? 0) + 1
      // Its answer was lost (a deadline, a dead connection): it may have landed.
      if (err?.indeterminate === true) out.maybe.push([file, line])
      if (codeOf(err) === 'FS_SANDBOX_DENIED' || codeOf(err) === 'FS_IO_ERROR') out.messages.push(String(err?.message ?? err))
    }
  }
}

/** The name identity `id` is at now, or undefined (it is being re-created by someone). */
async function whereIs(fs, id) {
  const names = (await fs.listDir(await fs.resolve('.'))).map((e) => e.name).filter((n) => n.startsWith(`${id}-`))
  return names.length === 1 ? names[0] : undefined
}

async function shuffleLoop(fs, session, out) {
  for (let n = 0; Date.now() < deadline; n++) {
    const id = job.files[(session * 7 + n) % job.files.length]
    const kind = ['move', 'recreate', 'edit', 'edit'][(n + session) % 4]
    try {
      const at = await whereIs(fs, id)
      if (at === undefined) {
        out.failed.AWAY = (out.failed.AWAY ?? 0) + 1
        continue
      }
      if (kind === 'edit') {
        const line = `${name}-s${session}-${n}`
        await append(fs, at, line)
        out.ok.push([id, line])
      } else if (kind === 'move') {
        const to = `${id}-${(Number(at.slice(id.length + 1, -4)) + 1 + (n % 2)) % 3}.txt`
        const source = await fs.resolve(at)
        const info = await fs.stat(source)
        if (info?.type !== 'file') throw Object.assign(new Error('absent'), { code: 'ABSENT' })
        await fs.rename(source, await fs.resolve(to), { expected: { version: info.version } })
        out.moves++
      } else {
        const target = await fs.resolve(at)
        // The version first: a change after it makes the guarded remove stale, so the text read is what is removed.
        const info = await fs.stat(target)
        if (info?.type !== 'file') throw Object.assign(new Error('absent'), { code: 'ABSENT' })
        const text = await fs.readText(target)
        await fs.remove(target, { expected: { version: info.version } })
        let back
        for (let attempt = 0; attempt < 50 && back === undefined; attempt++) {
          back = await fs.writeText(target, text, { expected: { kind: 'createIfAbsent' } }).catch((err) => {
            out.messages.push(`recreate ${at}: ${codeOf(err)} ${String(err?.message ?? err)}`)
            return undefined
          })
        }
        if (back === undefined) out.lost.push(at)
        else out.recreated++
      }
    } catch (err) {
      out.failed[codeOf(err)] = (out.failed[codeOf(err)] ?? 0) + 1
      if (codeOf(err) === 'FS_SANDBOX_DENIED') out.messages.push(String(err?.message ?? err))
    }
  }
}

async function main() {
  const out = { pid: process.pid, ok: [], maybe: [], failed: {}, messages: [], moves: 0, recreated: 0, lost: [] }
  if (mode === 'write-big' || mode === 'edit-loop') {
    const fs = open()
    const target = await fs.resolve(job.file)
    const big = 'x'.repeat(job.bytes ?? 0)
    console.log(JSON.stringify({ ready: process.pid }))
    for (let n = 0; ; n++) {
      if (mode === 'write-big') await fs.writeText(target, `${n}\n${big}`).catch(() => undefined)
      else await fs.editText(target, { oldString: 'END\n', newString: `${n}\nEND\n`, replaceAll: false }).catch(() => undefined)
    }
  }
  const systems = Array.from({ length: job.sessions }, () => open(job.options ?? {}))
  try {
    const loop = mode === 'shuffle' ? shuffleLoop : editLoop
    await Promise.all(systems.map((fs, session) => loop(fs, session, out)))
  } finally {
    await Promise.all(systems.map((fs) => fs.close()))
  }
  console.log(JSON.stringify(out))
}

main().catch((err) => {
  console.log(JSON.stringify({ crashed: String(err?.stack ?? err) }))
  process.exitCode = 1
})

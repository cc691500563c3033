/**
 * Boots the real test servers with test-servers' own start functions (the ones the remote
 * tests' global setup uses). Those are TypeScript outside this project, so they are transpiled
 * (types stripped, nothing else) into a temp dir and imported; `import.meta.url` keeps pointing
 * at test-servers/, where their shell scripts live.
 */
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { fileURLToPath, pathToFileURL } from 'node:url'
import ts from 'typescript'

export interface S3Info {
  readonly endpoint: string
  readonly region: string
  readonly accessKeyId: string
  readonly secretAccessKey: string
  readonly bucket: string
}

export interface SftpInfo {
  readonly host: string
  readonly port: number
  readonly username: string
  readonly privateKey: string
  readonly root: string
}

interface Started<I> {
  readonly server?: { readonly info: I; stop(): Promise<void> } | undefined
  readonly why: string
}

interface TestServers {
  startS3(): Promise<Started<S3Info>>
  startSftp(): Promise<Started<{ readonly plain: SftpInfo }>>
}

const SERVERS = fileURLToPath(new URL('../../../test-servers/', import.meta.url))

/** test-servers/s3.ts and sftp.ts, as importable modules. */
async function load(): Promise<TestServers> {
  const dir = mkdtempSync(join(tmpdir(), 'seamfs-bench-servers-'))
  try {
    for (const name of ['s3', 'sftp']) {
      const source = join(SERVERS, `${name}.ts`)
      const here = JSON.stringify(pathToFileURL(source).href)
      const text = readFileSync(source, 'utf8').replaceAll('import.meta.url', here)
      const out = ts.transpileModule(text, { compilerOptions: { module: ts.ModuleKind.ESNext, target: ts.ScriptTarget.ES2022, verbatimModuleSyntax: true } })
      writeFileSync(join(dir, `${name}.js`), out.outputText)
    }
    const s3 = (await import(pathToFileURL(join(dir, 's3.js')).href)) as Pick<TestServers, 'startS3'>
    const sftp = (await import(pathToFileURL(join(dir, 'sftp.js')).href)) as Pick<TestServers, 'startSftp'>
    return { startS3: s3.startS3, startSftp: sftp.startSftp }
  } finally {
    rmSync(dir, { recursive: true, force: true })
  }
}

/** The servers that booted (null with the reason when one did not), and one stop for both. */
export interface Booted {
  readonly s3: S3Info | null
  readonly s3Why: string
  readonly sftp: SftpInfo | null
  readonly sftpWhy: string
  stop(): Promise<void>
}

export async function bootServers(want: { readonly s3: boolean; readonly sftp: boolean }): Promise<Booted> {
  const servers = await load()
  const none: Started<never> = { why: 'not requested' }
  const [s3, sftp] = await Promise.all([want.s3 ? servers.startS3() : none, want.sftp ? servers.startSftp() : none])
  return {
    s3: s3.server?.info ?? null,
    s3Why: s3.why,
    sftp: sftp.server?.info.plain ?? null,
    sftpWhy: sftp.why,
    stop: async () => {
      await Promise.all([s3.server?.stop(), sftp.server?.stop()])
    },
  }
}

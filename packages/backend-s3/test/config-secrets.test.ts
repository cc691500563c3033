/**
 * The S3 config and its `s3://` form never print a secret, whatever characters it holds (in the
 * user-info part, in a query string, in an endpoint); only the documented query keys are taken;
 * a half-named key pair is refused at parse time; and a URL that names the key variables mounts
 * the live server.
 */
import { isConfigError, redactUrl, type ConfigError } from '@seamfs/core/backend'
import { s3Backend } from '@seamfs/backend-s3/config'
import { describe, expect, it } from 'vitest'
import { freshPrefix, purge, rawClient, server, serverWhy } from './support.js'

const SPECIALS = ['/', '@', ':', '?', '#', '%', '/@:?#%', 'a/b@c:d?e#f%g', '%2F', '&x=', '=']
/** Secrets with recognizable halves: neither half may appear anywhere. */
const SECRETS = SPECIALS.map((c) => `Zq9x${c}Wv7y`)
const QUERY_KEYS = 'endpoint, region, forcePathStyle, accessKeyIdEnv, secretAccessKeyEnv'

function expectNoSecret(text: string, secret: string): void {
  expect(text).not.toContain(secret)
  expect(text).not.toContain('Zq9x')
  expect(text).not.toContain('Wv7y')
}

/** Runs `fn`, expects a ConfigError, returns it. */
function configError(fn: () => unknown): ConfigError {
  try {
    fn()
  } catch (err) {
    if (isConfigError(err)) return err
    throw err
  }
  throw new Error('expected a ConfigError, nothing was thrown')
}

/** The URL forms a user may paste a secret into, raw and %-encoded. */
function forms(secret: string): string[] {
  return [secret, encodeURIComponent(secret)].flatMap((s) => [
    `s3://AKIDEXAMPLE:${s}@bucket/prefix`,
    `s3://AKIDEXAMPLE:${s}@bucket/prefix?endpoint=http://127.0.0.1:7480`,
    `s3://:${s}@bucket`,
    `s3://bucket/prefix?secretAccessKey=${s}`,
    `s3://bucket/prefix?endpoint=http://127.0.0.1:7480&token=${s}`,
    `s3://bucket/prefix?password=${s}&region=us-east-1`,
    `s3://bucket/prefix?region=us-east-1&secretAccessKey=${s}&forcePathStyle=true`,
    `s3://bucket/prefix?endpoint=http://u:${s}@127.0.0.1:7480`,
    `s3://bucket:${s}@x/prefix`,
    `s3://bucket/prefix#${s}`,
  ])
}

describe('s3:// URLs never print a secret', () => {
  it.each(SECRETS)('secret %s: every form is a ConfigError without it, and redactUrl hides it', (secret) => {
    for (const spec of forms(secret)) {
      const err = configError(() => s3Backend.fromUrl(spec, '--fs'))
      expect(err.key.startsWith('--fs')).toBe(true)
      expectNoSecret(err.message, secret)
      expectNoSecret(redactUrl(spec), secret)
    }
  })

  it('says which rule was broken, naming an unknown query key but never its value', () => {
    const message = (spec: string): string => configError(() => s3Backend.fromUrl(spec, '--fs')).message
    expect(message('s3://AKID:Zq9x/Wv7y@bucket/p')).toBe('config: --fs: expected a valid URL, found the string "s3://AKID:***@bucket/p"')
    expect(message('s3://AKID:Zq9x@Wv7y@bucket/p')).toBe('config: --fs: expected no password in the URL (use an environment variable), found a password')
    expect(message('s3://bucket/p?secretAccessKey=Zq9xWv7y')).toBe(
      `config: --fs: expected only the query keys ${QUERY_KEYS}, found the unknown query key "secretAccessKey"`,
    )
    expect(message('s3://bucket/p?region=r&region=s')).toBe('config: --fs: expected each query key at most once, found the query key "region" twice')
    expect(message('s3://AKID@bucket/p')).toBe(
      'config: --fs: expected no user in an s3:// URL (name the key variables with accessKeyIdEnv and secretAccessKeyEnv), found a user',
    )
    expect(message('s3://bucket/p#frag')).toBe('config: --fs: expected no "#" in the URL (write it as %23), found a fragment')
    expect(message('s3://bucket/p?forcePathStyle=yes')).toBe('config: --fs.forcePathStyle: expected true or false, found the string "yes"')
  })

  it('redactUrl keeps what is not secret: scheme, user, host, path and query keys', () => {
    expect(redactUrl('s3://AKID:Zq9x/a@b:c?d#e%fWv7y@bucket/p/q?endpoint=http://h:1&region=r')).toBe('s3://AKID:***@bucket/p/q?endpoint=***&region=***')
    expect(redactUrl('s3://bucket/p?token=Zq9x#Wv7y')).toBe('s3://bucket/p?token=***#***')
    expect(redactUrl('s3://bucket/p')).toBe('s3://bucket/p')
  })
})

describe('the S3 config', () => {
  it('reads the documented query keys, + as a plus and %-escapes decoded', () => {
    expect(
      s3Backend.fromUrl('s3://bucket/a%20b/?endpoint=http://127.0.0.1:7480&region=r+1&forcePathStyle=true&accessKeyIdEnv=K&secretAccessKeyEnv=S', '--fs'),
    ).toEqual({
      type: 's3',
      bucket: 'bucket',
      prefix: 'a b/',
      endpoint: 'http://127.0.0.1:7480',
      region: 'r+1',
      forcePathStyle: true,
      accessKeyIdEnv: 'K',
      secretAccessKeyEnv: 'S',
    })
  })

  it('a half-named key pair is refused at parse time, naming the missing key', () => {
    const only = (key: string, where: string, raw: object): string => {
      const err = configError(() => s3Backend.parseConfig({ type: 's3', bucket: 'b', ...raw }, where))
      expect(err.key).toBe(key)
      return err.message
    }
    expect(only('backend.secretAccessKeyEnv', 'backend', { accessKeyIdEnv: 'K' })).toBe(
      'config: backend.secretAccessKeyEnv: expected a variable name too, since accessKeyIdEnv is given (the two name one key), found nothing',
    )
    expect(only('backend.accessKeyIdEnv', 'backend', { secretAccessKeyEnv: 'S' })).toBe(
      'config: backend.accessKeyIdEnv: expected a variable name too, since secretAccessKeyEnv is given (the two name one key), found nothing',
    )
    expect(configError(() => s3Backend.fromUrl('s3://b/p?accessKeyIdEnv=K', '--fs')).key).toBe('--fs.secretAccessKeyEnv')
  })

  it('keys in the config, or credentials in the endpoint, are refused without being shown', () => {
    for (const secret of SECRETS) {
      for (const raw of [
        { secretAccessKey: secret },
        { accessKeyId: secret },
        { endpoint: `http://user:${secret}@127.0.0.1:7480` },
        { endpoint: `http://user:${encodeURIComponent(secret)}@127.0.0.1:7480` },
      ]) {
        expectNoSecret(configError(() => s3Backend.parseConfig({ type: 's3', bucket: 'b', ...raw }, 'backend')).message, secret)
      }
    }
  })

  it('open() names an unset variable, never the value of the other', async () => {
    const secret = SECRETS.at(-1) as string
    const config = s3Backend.parseConfig({ type: 's3', bucket: 'b', accessKeyIdEnv: 'NOT_SET_ID', secretAccessKeyEnv: 'THE_SECRET' }, 'backend')
    const err: unknown = await s3Backend.open(config, { THE_SECRET: secret }, '/').catch((e: unknown) => e)
    expect(isConfigError(err) && err.message).toBe('config: backend.accessKeyIdEnv: expected the variable NOT_SET_ID to be set, found nothing')
  })
})

describe.skipIf(server === null)(`an s3:// URL naming the key variables, on radosgw${server === null ? ` (skipped: ${serverWhy})` : ''}`, () => {
  it('mounts the bucket with the keys from the environment', async () => {
    if (server === null) return
    const prefix = freshPrefix('url')
    const spec = `s3://${server.bucket}/${prefix}?endpoint=${server.endpoint}&region=${server.region}&forcePathStyle=true&accessKeyIdEnv=K&secretAccessKeyEnv=S`
    const config = s3Backend.fromUrl(spec, '--fs')
    const fs = await s3Backend.open(config, { K: server.accessKeyId, S: server.secretAccessKey }, '/')
    const client = rawClient(server)
    try {
      await fs.writeText(await fs.resolve('a.txt'), 'via url\n')
      expect(await fs.readText(await fs.resolve('a.txt'))).toBe('via url\n')
      expect(s3Backend.describe(config)).toBe(`s3://${server.bucket}/${prefix} at ${server.endpoint}`)
    } finally {
      await fs.close()
      await purge(client, server.bucket, prefix)
      client.destroy()
    }
  })
})

import { Client, type ConnectConfig } from 'ssh2'
import { ConnectionFailure } from './errors.js'
import { hostKeyPolicy, type HostKeyOptions } from './known-hosts.js'

/** Who to be on the server, and how long the handshake may take. */
export interface HandshakeOptions extends HostKeyOptions {
  readonly username?: string | undefined
  readonly privateKey?: string | Buffer | undefined
  readonly passphrase?: string | undefined
  readonly password?: string | undefined
  readonly agent?: string | undefined
  /** The connect timeout (TCP, SSH handshake, authentication). */
  readonly readyTimeoutMs: number
}

/**
 * A new ssh2 client, connected and authenticated to `o.host` (which, with `o.username`, must be
 * set): the host key checked against the policy of `o`, keepalives on, Nagle's algorithm off.
 */
export async function connectClient(o: HandshakeOptions): Promise<Client> {
  const policy = await hostKeyPolicy(o)
  let refusal: string | undefined
  const verify = (key: Buffer): boolean => {
    refusal = policy.check?.(key)
    return refusal === undefined
  }
  const config: ConnectConfig = {
    host: o.host as string,
    port: o.port,
    username: o.username as string,
    readyTimeout: o.readyTimeoutMs,
    keepaliveInterval: 15_000,
    keepaliveCountMax: 3,
    ...(o.privateKey === undefined ? {} : { privateKey: o.privateKey }),
    ...(o.passphrase === undefined ? {} : { passphrase: o.passphrase }),
    ...(o.password === undefined ? {} : { password: o.password }),
    ...(o.agent === undefined ? {} : { agent: o.agent }),
    ...(policy.check === undefined ? {} : { hostVerifier: verify }),
    // Moved to the front (remove, then prepend): the server then shows the key known_hosts knows, as OpenSSH arranges.
    ...(policy.preferred.length === 0 ? {} : { algorithms: { serverHostKey: { remove: [...policy.preferred], prepend: [...policy.preferred], append: [] } } }),
  }
  return new Promise<Client>((resolve, reject) => {
    const client = new Client()
    let agentFailure: Error | undefined
    const onError = (err: Error): void => {
      // ssh2 reports an unusable agent (or a key it cannot sign with) and goes on to the next method.
      if (levelOf(err) === 'agent') return void (agentFailure = err)
      client.removeListener('error', onError)
      client.removeListener('ready', onReady)
      // More errors may follow the first; unheard, one would crash the process.
      client.on('error', () => undefined)
      client.end()
      // A refused host key is not a network hiccup: retrying meets the same key.
      if (refusal !== undefined) reject(new ConnectionFailure({ code: 'FS_IO_ERROR', reason: refusal, retryable: false }, err))
      else if (agentFailure !== undefined && levelOf(err) === 'client-authentication') {
        const reason = `authentication failed (the ssh-agent at ${o.agent} could not be used: ${agentFailure.message})`
        reject(new ConnectionFailure({ code: 'FS_PERMISSION_DENIED', reason }, err))
      } else reject(err)
    }
    const onReady = (): void => {
      client.removeListener('error', onError)
      client.on('error', () => undefined)
      client.setNoDelay(true)
      resolve(client)
    }
    client.on('error', onError)
    client.once('ready', onReady)
    try {
      client.connect(config)
    } catch (err) {
      // ssh2 validates options (an unparsable key, say) synchronously: a setup error, not a network one.
      const detail = err instanceof Error ? err.message : String(err)
      reject(new ConnectionFailure({ code: 'FS_IO_ERROR', reason: `invalid SFTP connection options: ${detail}` }, err))
    }
  })
}

/** ssh2's `level` of an error (`client-authentication`, `agent`…). */
function levelOf(err: Error): unknown {
  return (err as { level?: unknown }).level
}

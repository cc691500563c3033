/** The part of ssh2-sftp-client (untyped package) the latency bench calls. */
declare module 'ssh2-sftp-client' {
  import type { Client, ConnectConfig } from 'ssh2'

  export interface FileInfo {
    readonly type: string
    readonly name: string
    readonly size: number
  }

  export default class SftpClient {
    /** The ssh2 connection; each call adds listeners to it while it runs. */
    readonly client: Client
    connect(config: ConnectConfig): Promise<unknown>
    get(path: string): Promise<Buffer>
    put(input: Buffer | string, path: string): Promise<string>
    exists(path: string): Promise<false | 'd' | '-' | 'l'>
    list(path: string): Promise<FileInfo[]>
    stat(path: string): Promise<{ readonly size: number; readonly modifyTime: number }>
    end(): Promise<boolean>
  }
}

#!/usr/bin/env node
import { runCli } from './cli.js'

// The AWS SDK prints nine lines before every S3 command on Node 20 (its own support of Node 20 ends
// in 2027; seamfs pins the SDK's version). A user who sets the variable either way decides.
process.env['AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED'] ??= 'true'

async function readStdin(): Promise<string> {
  const chunks: Buffer[] = []
  for await (const chunk of process.stdin) chunks.push(chunk as Buffer)
  return Buffer.concat(chunks).toString('utf8')
}

const code = await runCli(process.argv.slice(2), {
  stdout: (text) => process.stdout.write(text),
  stderr: (text) => process.stderr.write(text),
  stdin: readStdin,
  cwd: process.cwd(),
  env: process.env,
  stderrIsTTY: process.stderr.isTTY,
})
process.exitCode = code

export { ConfigError, isConfigError, parseFsUrl, validateConfig, type BackendConfig, type HarnessConfig, type SandboxConfig } from './config.js'
export { describeBackend, loadHarness, type Harness, type LoadOptions } from './harness.js'
export { runCli, readConfig, CONFIG_FILE, type Io } from './cli.js'

export {
  ConfigError,
  isConfigError,
  parseFsUrl,
  validateConfig,
  type BackendConfig,
  type HarnessConfig,
  type MountConfig,
  type MountsConfig,
  type SandboxConfig,
} from './config.js'
export { describeBackend, harnessSandbox, loadHarness, type Harness, type HarnessSandbox, type LoadOptions } from './harness.js'
export { runCli, readConfig, CONFIG_FILE, type Io, type LoadedConfig } from './cli.js'

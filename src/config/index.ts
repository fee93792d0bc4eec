export { ConfigError, formatProblems, type ConfigProblem } from './errors.js';
export { DEFAULT_CONFIG_FILE, configEnv, configFromRaw, loadConfig, parseConfig, parseConfigText, parsePort, PORT_ENV, type LoadedConfig, type LoadOptions, type LoadResult } from './load.js';
export * from './schema/index.js';
export type { ProfileId, ToolPolicyConfig, ByProviderEntry, ToolsBySenderConfig } from './schema/policy.js';
export type { ExecConfig } from './schema/exec.js';
export type { ChannelsConfig, DiscordConfig, SlackConfig, WebConfig } from './schema/channels.js';

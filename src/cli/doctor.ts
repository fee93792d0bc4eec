import { execFileSync } from 'node:child_process';
import { accessSync, constants, existsSync, readFileSync, statSync } from 'node:fs';
import path from 'node:path';
import type { WardenConfig } from '../config/index.js';
import { effectiveExecConfig } from '../exec/check.js';
import { containerSandboxAdvice, detectContainer, hostContainerSignals, type ContainerRuntime } from '../exec/container.js';
import { describeIdentity, SANDBOX_FIXES } from '../exec/sandbox-audit.js';
import { probeSandbox, type SandboxProbe } from '../exec/sandbox-probe.js';
import { probeEgress, type EgressProbe } from '../exec/egress/probe.js';
import { BWRAP_PATH, resolveExecHost, sandboxIdentity } from '../exec/sandbox.js';
import { passwdNames, processesSharingUid, sandboxUidReport, type SharedUidProcess } from '../exec/sandbox-uid.js';
import { mcpDoctorChecks } from '../mcp/doctor.js';
import { probeStore } from '../app/schema-probe.js';
import { platformTokenVerdicts, verdictLine } from '../config/platform-tokens.js';
import { DEFAULT_PLATFORM_TIMEOUT_MS, discordPlatformChecks, runningShardsCheck, slackPlatformChecks } from './platform-check.js';
import { EXIT, flag, stringOption, type CliIO, type CommandRunner } from './args.js';
import { loadConfigForCommand, printResult } from './config.js';

export interface DoctorCheck {
  name: string;
  /** false: a failure — doctor exits 1. */
  ok: boolean;
  /** Warden runs, with less than it could: printed as `warn`, doctor still exits 0. */
  warn?: true;
  detail: string;
  /** What to do when not ok; absent when nothing needs doing. */
  fix?: string;
}

const MODEL_KEYS: Record<string, string[]> = {
  anthropic: ['ANTHROPIC_API_KEY'],
  openai: ['OPENAI_API_KEY'],
  google: ['GEMINI_API_KEY', 'GOOGLE_API_KEY'],
  gemini: ['GEMINI_API_KEY', 'GOOGLE_API_KEY'],
};

function versionOf(bin: string, args: string[]): string | undefined {
  try {
    return execFileSync(bin, args, { encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'], timeout: 10_000 }).trim().split('\n')[0];
  } catch {
    return undefined;
  }
}

export interface DoctorOptions {
  /** The sandbox probe to report (tests); default: a fresh run of the real sandbox. */
  probe?: SandboxProbe;
  /** The egress probe to report (tests); default: a real sandboxed run through the proxy. */
  egress?: EgressProbe;
  /** The processes sharing the sandbox uid (tests); default: a scan of /proc. */
  sharedUid?: SharedUidProcess[];
  /** The container runtime to report (tests); default: detected from the environment. */
  container?: ContainerRuntime | null;
  /** Ask the chat platforms about the tokens (default), with this deadline per platform; `offline` skips it. */
  platforms?: 'offline' | { timeoutMs: number };
}

/** What is installed and reachable; every check says what to do when it fails. */
export async function runDoctorChecks(config: WardenConfig, baseDir: string, env: NodeJS.ProcessEnv, options: DoctorOptions = {}): Promise<DoctorCheck[]> {
  const checks: DoctorCheck[] = [];
  const [major = 0, minor = 0] = process.versions.node.split('.').map(Number);
  checks.push({
    name: 'node',
    ok: major > 20 || (major === 20 && minor >= 18),
    detail: `Node ${process.versions.node}`,
    fix: 'install Node 20.18 or newer',
  });

  const chromium = existsSync('/usr/bin/chromium') ? versionOf('/usr/bin/chromium', ['--version']) : undefined;
  // Without Chromium only the browser tool is missing (`/tools` says why): Warden runs.
  checks.push({
    name: 'chromium',
    ok: true,
    ...(chromium === undefined ? { warn: true as const } : {}),
    detail: chromium ?? '/usr/bin/chromium not found: the browser tool is unavailable',
    fix: 'apt-get install chromium',
  });

  const bwrap = existsSync(BWRAP_PATH) ? versionOf(BWRAP_PATH, ['--version']) : undefined;
  const exec = effectiveExecConfig(config);
  const host = resolveExecHost(exec.host, bwrap !== undefined);
  checks.push({
    name: 'bubblewrap',
    ok: bwrap !== undefined || host === 'gateway',
    detail: bwrap ?? (host === 'gateway' ? 'bwrap not found: exec runs on the host (gateway) instead of a sandbox' : 'bwrap not found: tools.exec.host is sandbox, so exec is unavailable'),
    fix: 'apt-get install bubblewrap',
  });
  // The sandbox's properties, from a real sandboxed run; failures matter where exec uses it.
  const sandbox = options.probe ?? (await probeSandbox(sandboxIdentity(exec.sandbox)));
  const used = host === 'sandbox' && exec.security !== 'deny';
  checks.push({ name: 'sandbox user', ok: true, detail: `sandboxed commands run as ${describeIdentity(sandbox.identity)}` });
  // Whether another host process runs as the sandbox uid now: what a sandboxed start refuses.
  const identity = sandboxIdentity(exec.sandbox);
  const others = options.sharedUid ?? (identity.staged ? processesSharingUid(identity.uid, { gid: identity.gid }) : []);
  let passwd = '';
  try {
    passwd = readFileSync('/etc/passwd', 'utf8');
  } catch {
    // No /etc/passwd: no account to name.
  }
  checks.push({ name: 'sandbox uid', ...sandboxUidReport(identity, others, passwdNames(identity.uid, passwd), used) });
  for (const check of sandbox.checks) {
    checks.push({
      name: `sandbox ${check.property}`,
      ok: check.ok || !used,
      detail: check.ok || used ? check.detail : `${check.detail} (not used: exec ${exec.security === 'deny' ? 'is denied' : 'runs on the gateway host'})`,
      fix: `${SANDBOX_FIXES[check.property]}; until then exec refuses every command (it never falls back to the host)`,
    });
  }
  // Sandbox egress (tools.exec.sandbox.network): its own network namespace, and the proxy reached through the forwarder.
  const network = exec.sandbox.network;
  const netUsed = used && network.mode !== 'none';
  const egress = options.egress ?? (sandbox.ok ? await probeEgress(sandboxIdentity(exec.sandbox)) : { ok: false, detail: 'not checked: the sandbox does not start' });
  checks.push({
    name: 'egress proxy',
    ok: egress.ok || !netUsed,
    ...(!egress.ok && !netUsed ? { warn: true as const } : {}),
    detail: `${egress.detail}; tools.exec.sandbox.network.mode is ${network.mode}${network.mode === 'allowlist' ? ` (${network.allow.length} allowed, ask ${network.ask})` : ''}`,
    fix: 'install node from the distribution (/usr/bin/node) and make sure the sandbox starts; until then a sandboxed command with network mode allowlist or open is refused',
  });
  // In a container, say what the container must allow for the sandbox, in its runtime's terms.
  const container = options.container === undefined ? detectContainer(hostContainerSignals(env)) : (options.container ?? undefined);
  if (container) {
    const advice = containerSandboxAdvice(sandbox, container);
    checks.push(
      advice
        ? { name: 'container', ok: true, warn: true, detail: `${container}: ${advice.detail}`, fix: advice.fix }
        : { name: 'container', ok: true, detail: `${container}: the sandbox works inside the container` },
    );
  }

  const dataDir = path.resolve(baseDir, env.WARDEN_DATA_DIR ?? config.dataDir);
  let dataOk = true;
  let dataDetail = dataDir;
  // Doctor writes nothing: a missing dir is fine when its nearest existing ancestor is writable.
  let probe = dataDir;
  while (!existsSync(probe) && path.dirname(probe) !== probe) probe = path.dirname(probe);
  try {
    if (!statSync(probe).isDirectory()) throw new Error(`${probe} is not a directory`);
    accessSync(probe, constants.W_OK);
    if (probe !== dataDir) dataDetail += ' (will be created)';
  } catch (err) {
    dataOk = false;
    dataDetail = `${dataDir}: ${(err as Error).message}`;
  }
  checks.push({ name: 'data dir', ok: dataOk, detail: dataDetail, fix: 'set WARDEN_DATA_DIR or dataDir to a writable folder' });
  const store = await probeStore({ dataDir, url: config.store.url });
  checks.push({ name: 'store', ok: store.ok, ...(store.warn ? { warn: true as const } : {}), detail: store.detail, ...(store.fix ? { fix: store.fix } : {}) });

  const discord = config.channels.discord;
  const slack = config.channels.slack;
  // The tokens' shape, judged as `warden start` judges it (a fail there stops the start).
  for (const verdict of platformTokenVerdicts(config.channels)) {
    const failed = verdict.findings.some((f) => f.level === 'fail');
    checks.push({
      name: verdict.platform,
      ok: !failed,
      ...(!failed && verdict.findings.length > 0 ? { warn: true as const } : {}),
      detail: verdictLine(verdict),
      ...(verdict.findings.length > 0 ? { fix: `correct ${[...new Set(verdict.findings.map((f) => f.path))].join(' and ')}` } : {}),
    });
  }
  // The platforms themselves: whose token it is, and whether the app has what Warden needs.
  const platforms = options.platforms ?? { timeoutMs: DEFAULT_PLATFORM_TIMEOUT_MS };
  if (platforms === 'offline') {
    if (discord?.token || slack?.botToken) checks.push({ name: 'platforms', ok: true, detail: 'tokens not checked against Discord or Slack (--offline)' });
  } else {
    const asked = await Promise.all([discord?.token ? discordPlatformChecks(discord, platforms) : [], runningShardsCheck(discord, config.ops, platforms), slack?.botToken ? slackPlatformChecks(slack, platforms) : []]);
    checks.push(...asked.flat());
  }
  if (!discord?.token && !slack?.botToken) {
    checks.push({ name: 'web chat', ok: true, detail: `embedded default on http://${config.channels.web.host}:${config.channels.web.port}` });
  }

  // A failing MCP server is a warning: its tools are unavailable, Warden runs and retries.
  checks.push(...(await mcpDoctorChecks(config, baseDir)));

  const models = new Set([config.models.default, ...config.agents.list.map((a) => a.model)].filter((m): m is string => !!m));
  if (models.size === 0) {
    // The embedded default runs without a model: commands work and the chat says how to add one.
    checks.push({ name: 'model', ok: true, warn: true, detail: 'no model configured: slash commands work, chat answers say how to add one', fix: 'set models.default, e.g. anthropic/claude-sonnet-4-5' });
  }
  for (const model of models) {
    const provider = model.split('/')[0]!.toLowerCase();
    const keys = MODEL_KEYS[provider] ?? [];
    const present = keys.find((k) => env[k]);
    checks.push({
      name: `model ${model}`,
      ok: keys.length === 0 || present !== undefined,
      detail: keys.length === 0 ? 'no key needed (OpenAI-compatible or local)' : present ? `${present} present` : `none of ${keys.join(', ')} is set`,
      fix: `export ${keys[0] ?? 'the provider key'}`,
    });
  }
  return checks.map((c) => (c.ok && !c.warn ? { name: c.name, ok: c.ok, detail: c.detail } : c));
}

export const run: CommandRunner = async (args, io: CliIO) => {
  const timeout = stringOption(args, 'timeout');
  const seconds = timeout === undefined ? DEFAULT_PLATFORM_TIMEOUT_MS / 1000 : Number(timeout);
  if (!(seconds > 0 && seconds <= 120)) {
    io.stderr('warden doctor: --timeout takes the seconds to wait for each chat platform, more than 0 and at most 120');
    return EXIT.badInput;
  }
  const loaded = loadConfigForCommand(args, io);
  if (!loaded) return EXIT.badInput;
  const platforms = flag(args, 'offline') ? ('offline' as const) : { timeoutMs: seconds * 1000 };
  const checks = await runDoctorChecks(loaded.config, loaded.baseDir, io.env, { platforms });
  printResult(args, io, { checks }, () =>
    checks.map((c) => `${!c.ok ? 'FAIL' : c.warn ? 'warn' : 'ok  '} ${c.name.padEnd(28)} ${c.detail}${c.fix ? `\n     fix: ${c.fix}` : ''}`).join('\n'),
  );
  // A printed failure is a failed doctor run.
  return checks.some((c) => !c.ok) ? EXIT.critical : EXIT.ok;
};

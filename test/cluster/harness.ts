// `warden start` processes on one PostgreSQL database behind the Slack fake's HTTP events, the
// way a load balancer spreads Slack's requests over instances: each instance has its own
// receiver port, the test picks which one a request reaches.
import { mkdirSync, mkdtempSync, writeFileSync, existsSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { execa, type ResultPromise } from 'execa';
import { expect } from 'vitest';
import { startFakeOpenAI } from '../fakes/models/openai-fake.js';
import type { FakeModelServer } from '../fakes/models/server.js';
import type { SlackFake, SlackMessage } from '../fakes/slack/index.js';
import { until } from '../until.js';
import { freePort } from '../free-port.js';

/** A port free right now on loopback (the instance binds it a moment later). */
export { freePort };

export const BIN = fileURLToPath(new URL('../../bin/warden.js', import.meta.url));
export const SECRET = 'cluster-signing-secret';
export const DEV = 'C0000DEV';
export const ALICE = 'U0000ALICE';
export const OLGA = 'U0000OLGA';

export interface Instance {
  name: string;
  dir: string;
  eventsUrl: string;
  opsUrl: string;
  child: ResultPromise;
  output: () => string;
}

/** A folder the instances share as their agents' workspace (where `runs.log` counts command runs). */
export function sharedWorkspace(): string {
  const dir = mkdtempSync(path.join(tmpdir(), 'warden-cluster-ws-'));
  return dir;
}

export const runsIn = (workspace: string): number =>
  existsSync(path.join(workspace, 'runs.log')) ? readFileSync(path.join(workspace, 'runs.log'), 'utf8').split('\n').filter(Boolean).length : 0;

/**
 * Starts one `warden start` process. The store URL reaches it through the environment, referenced
 * from the file as `${WARDEN_STORE_URL}` (how an operator keeps the password out of the file).
 */
export async function startInstance(
  name: string,
  options: { fake: SlackFake; storeUrl: string; workspace: string; leaseSec: number; extraEnv?: Record<string, string>; modelUrl?: string; logLevel?: string; waitSec?: number; extraYaml?: string[]; slackMode?: 'http' | 'socket'; nodeArgs?: string[]; bin?: string; poolMax?: number },
): Promise<Instance> {
  // Socket Mode: the instance opens its own connection to the fake (which hands each envelope
  // to one connection), and its receiver port stays unused.
  const socket = options.slackMode === 'socket';
  const dir = mkdtempSync(path.join(tmpdir(), `warden-cluster-${name}-`));
  mkdirSync(path.join(dir, 'data'));
  const slackPort = await freePort();
  const opsPort = await freePort();
  writeFileSync(
    path.join(dir, 'warden.config.yaml'),
    [
      'owners:',
      `  slack: [${OLGA}]`,
      'tools:',
      '  profile: coding',
      '  exec:',
      '    host: gateway',
      'agents:',
      '  defaults:',
      `    workspace: ${JSON.stringify(options.workspace)}`,
      'channels:',
      '  slack:',
      '    botToken: xoxb-fake',
      ...(socket ? ['    appToken: xapp-1-fake'] : [`    signingSecret: ${SECRET}`]),
      `    apiUrl: ${JSON.stringify(options.fake.apiUrl)}`,
      ...(socket ? [] : ['    host: 127.0.0.1', `    port: ${slackPort}`]),
      '    channels:',
      "      '#dev':",
      '        tools:',
      "          allow: ['*']",
      'store:',
      '  url: ${WARDEN_STORE_URL}',
      `  leaseSec: ${options.leaseSec}`,
      ...(options.poolMax !== undefined ? [`  poolMax: ${options.poolMax}`] : []),
      'ops:',
      `  port: ${opsPort}`,
      'dataDir: ./data',
      ...(options.waitSec !== undefined ? ['approvals:', `  waitSec: ${options.waitSec}`] : []),
      ...(options.extraYaml ?? []),
      ...(options.modelUrl ? ['models:', '  default: openai/gpt-test', '  providers:', '    openai:', `      baseUrl: ${JSON.stringify(options.modelUrl)}`] : []),
      '',
    ].join('\n'),
  );
  const child = execa('node', [...(options.nodeArgs ?? []), options.bin ?? BIN, 'start'], {
    cwd: dir,
    env: { WARDEN_LOG_LEVEL: options.logLevel ?? 'warn', WARDEN_DATA_DIR: '', WARDEN_STORE_URL: options.storeUrl, OPENAI_API_KEY: 'sk-fake', ...options.extraEnv },
    reject: false,
    extendEnv: true,
  });
  let out = '';
  child.stdout?.on('data', (c: Buffer) => (out += c.toString()));
  child.stderr?.on('data', (c: Buffer) => (out += c.toString()));
  await new Promise<void>((resolve, reject) => {
    const onData = () => {
      if (out.includes('Warden is running')) resolve();
    };
    child.stdout?.on('data', onData);
    void child.then((r) => reject(new Error(`${name} exited ${r.exitCode} before starting:\n${out}`)));
  });
  return { name, dir, eventsUrl: `http://127.0.0.1:${slackPort}/slack/events`, opsUrl: `http://127.0.0.1:${opsPort}`, child, output: () => out };
}

/** Stops an instance (SIGTERM) and waits for it; a no-op once it exited. */
export async function stopInstance(instance: Instance): Promise<void> {
  if (instance.child.exitCode === null && instance.child.signalCode === null) instance.child.kill('SIGTERM');
  await instance.child;
}

/** A user's direct message to the bot, delivered to `instance`. */
export function directMessage(fake: SlackFake, instance: Instance, user: string, text: string): Promise<Response> {
  const event = fake.messageEvent({ user, channel: `D${user.slice(1)}`, text });
  return fake.sendEvent(instance.eventsUrl, fake.envelope(event), { secret: SECRET });
}

/**
 * The answers posted to DMs (chat.postMessage to a `D…` channel, no blocks) from now on, counted
 * as the fake records them: a benchmark polls the count every few milliseconds, and filtering
 * every request recorded so far at each poll would cost the harness more as a run goes on.
 */
export function dmAnswers(fake: SlackFake): { count(): number; stop(): void } {
  let count = 0;
  const stop = fake.requests.subscribe((r) => {
    if (r.path === '/api/chat.postMessage' && String(r.body?.channel).startsWith('D') && !r.body.blocks) count++;
  });
  return { count: () => count, stop };
}

/** A user's mention of the bot in #dev, delivered to `instance` as Slack would (signed). */
export function mention(fake: SlackFake, instance: Instance, user: string, text: string): Promise<Response> {
  const event = fake.messageEvent({ user, channel: DEV, text: `<@${fake.bot.userId}> ${text}`, type: 'app_mention' });
  return fake.sendEvent(instance.eventsUrl, fake.envelope(event), { secret: SECRET });
}

/** The approval card posted in #dev whose text names `needle`. */
export async function cardFor(fake: SlackFake, needle: string, ms = 30_000): Promise<SlackMessage> {
  await fake.requests.waitFor((r) => r.path === '/api/chat.postMessage' && r.body.channel === DEV && Array.isArray(r.body.blocks) && JSON.stringify(r.body.blocks).includes(needle), ms, 'approval card');
  return [...fake.messages.values()].find((m) => m.channel === DEV && m.blocks?.some((b) => b.type === 'actions') && JSON.stringify(m.blocks).includes(needle))!;
}

/** A click on one of the card's buttons, delivered to `instance`. */
export function click(fake: SlackFake, instance: Instance, card: SlackMessage, decision: string, user: string): Promise<Response> {
  const button = (card.blocks!.find((b) => b.type === 'actions')?.elements ?? []).find((b: any) => b.action_id === `warden_approval_${decision}`);
  if (!button) throw new Error(`card has no ${decision} button`);
  return fake.sendAction(instance.eventsUrl, fake.blockActions({ message: card, actionId: button.action_id, value: button.value, user }), { secret: SECRET });
}

export { until } from '../until.js';

// ---------- the order tests (order.e2e, socket-order.e2e) ----------

const TAG = /msg-\d+-\d+/g;

/**
 * A model that echoes the newest `msg-C-K` tag it was sent, after a pause long enough that a
 * conversation's next messages reach other instances while its turn runs.
 */
export function startTagEchoModel(): Promise<FakeModelServer> {
  return startFakeOpenAI({
    respond: (request) => {
      const users = (request.body.messages as Array<{ role: string }>).filter((m) => m.role === 'user');
      const tags = JSON.stringify(users.at(-1)).match(TAG) ?? ['none'];
      return { kind: 'reply', text: `echo ${tags.at(-1)}`, delayMs: 500 };
    },
  });
}

/** The answers in `user`'s DM as they stand (a streamed answer is edited to its end), in the order they were posted. */
export const answersInDm = (fake: SlackFake, user: string): string[] =>
  [...fake.messages.values()]
    .filter((m) => m.channel === `D${user.slice(1)}` && !m.blocks)
    .sort((x, y) => Number(x.ts) - Number(y.ts))
    .map((m) => String(m.text));

/** How many of `user`'s DM messages took their place in the session line on `instance` (its debug log). */
export const placedInLine = (instance: Instance, user: string): number =>
  instance.output().split('\n').filter((l) => l.includes('took its place in the session line') && l.includes(`direct:${user.toLowerCase()}`)).length;

/** Every conversation's answers arrived, then (a moment more, so a duplicate would show) they are exactly its messages' echoes in order. */
export async function expectEchoedInOrder(fake: SlackFake, users: readonly string[], messages: number): Promise<void> {
  await until(() => users.every((u) => answersInDm(fake, u).filter((t) => /^echo msg-\d+-\d+$/.test(t)).length >= messages), 60_000, 'every answer');
  await new Promise((r) => setTimeout(r, 500));
  users.forEach((u, c) => expect(answersInDm(fake, u)).toEqual(Array.from({ length: messages }, (_, k) => `echo msg-${c}-${k}`)));
}

import { once } from 'node:events';
import { setTimeout as sleep } from 'node:timers/promises';
import { Client, Events, GatewayIntentBits, Partials, type Message } from 'discord.js';
import { afterEach, describe, expect, it } from 'vitest';
import { defaultGuild, fakeUser, startDiscordFake, type DiscordFake } from './index.js';

// The fake must behave like Discord where a bot could get it wrong: a bot that forgets an
// intent or the channel partial must see what it would see in production.
const GENERAL = defaultGuild.channels[0]!.id;
const alice = fakeUser('400000000000000001', 'alice');

let fake: DiscordFake;
let client: Client | undefined;

async function connect(intents: number[], partials: Partials[] = [], heartbeatMs?: number): Promise<Message[]> {
  fake = await startDiscordFake(heartbeatMs ? { heartbeatMs } : {});
  client = new Client({ intents, partials, rest: { api: fake.apiBaseUrl, retries: 0 } });
  const seen: Message[] = [];
  client.on(Events.MessageCreate, (m) => void seen.push(m));
  const ready = once(client, Events.ClientReady);
  await client.login('fake-token');
  await ready;
  return seen;
}

afterEach(async () => {
  await client?.destroy();
  client = undefined;
  await fake?.close();
});

describe('Discord fake', () => {
  it('sends empty content to a bot without the MessageContent intent, unless it is mentioned', async () => {
    const seen = await connect([GatewayIntentBits.Guilds, GatewayIntentBits.GuildMessages]);
    fake.userMessage({ author: alice, channelId: GENERAL, content: 'secret plans' });
    fake.userMessage({ author: alice, channelId: GENERAL, content: `<@${fake.bot.id}> hello` });
    await sleep(150);
    expect(seen.map((m) => m.content)).toEqual(['', `<@${fake.bot.id}> hello`]);
  });

  it('sends no guild messages without GuildMessages and no DMs without DirectMessages', async () => {
    const seen = await connect([GatewayIntentBits.Guilds], [Partials.Channel]);
    expect(fake.userMessage({ author: alice, channelId: GENERAL, content: 'x' })).toBeUndefined();
    expect(fake.userMessage({ author: alice, dm: true, content: 'y' })).toBeUndefined();
    await sleep(100);
    expect(seen).toHaveLength(0);
  });

  it('delivers a DM only to a client with the channel partial, as Discord does', async () => {
    const seen = await connect([GatewayIntentBits.Guilds, GatewayIntentBits.DirectMessages]);
    fake.userMessage({ author: alice, dm: true, content: 'lost without the partial' });
    await sleep(150);
    expect(seen).toHaveLength(0);
  });

  it('lets a client resume a zombie connection, and keeps delivering on the new socket', async () => {
    const seen = await connect([GatewayIntentBits.Guilds, GatewayIntentBits.GuildMessages, GatewayIntentBits.MessageContent], [], 150);
    const resumed = once(client!, Events.ShardResume);
    fake.silentHeartbeats = true;
    await resumed;
    const resume = await fake.frames.waitFor((f) => f.op === 6);
    expect(resume.d).toMatchObject({ token: 'fake-token', session_id: 'fake-session-1' });
    expect(fake.frames.filter((f) => f.op === 2)).toHaveLength(1);
    fake.userMessage({ author: alice, channelId: GENERAL, content: 'after resume' });
    await sleep(150);
    expect(seen.map((m) => m.content)).toEqual(['after resume']);
  });

  it('splits guilds over shards as Discord does: (guild_id >> 22) % count, DMs on shard 0', async () => {
    const beta = { id: '300000000004194305', name: 'Beta', channels: [{ id: '300000000004194306', name: 'ops', type: 0 as const }] };
    fake = await startDiscordFake({ guilds: [defaultGuild, beta], maxConcurrency: 16 });
    client = new Client({ intents: [GatewayIntentBits.Guilds, GatewayIntentBits.GuildMessages, GatewayIntentBits.MessageContent, GatewayIntentBits.DirectMessages], partials: [Partials.Channel], shardCount: 2, rest: { api: fake.apiBaseUrl, retries: 0 } });
    const seen: Array<[string, number]> = [];
    client.on(Events.Raw, (packet: { t?: string; d?: { content?: string } }, shardId: number) => void (packet.t === 'MESSAGE_CREATE' && seen.push([packet.d!.content!, shardId])));
    const ready = once(client, Events.ClientReady);
    await client.login('fake-token');
    await ready;
    expect(fake.frames.filter((f) => f.op === 2).map((f) => f.d.shard).sort()).toEqual([[0, 2], [1, 2]]);
    expect(client.guilds.cache.get(defaultGuild.id)?.shardId).toBe(0);
    expect(client.guilds.cache.get(beta.id)?.shardId).toBe(1);
    fake.userMessage({ author: alice, channelId: GENERAL, content: 'alpha' });
    fake.userMessage({ author: alice, channelId: beta.channels[0]!.id, content: 'beta' });
    fake.userMessage({ author: alice, dm: true, content: 'dm' });
    await sleep(150);
    expect(seen.sort()).toEqual([['alpha', 0], ['beta', 1], ['dm', 0]]);
  });

  it('answers login with a bad token with 401 when told to', async () => {
    fake = await startDiscordFake();
    fake.override(
      (r) => r.path === '/gateway/bot',
      (_r, res) => (res.writeHead(401, { 'content-type': 'application/json' }).end('{"message":"401: Unauthorized","code":0}'), true),
    );
    client = new Client({ intents: [GatewayIntentBits.Guilds], rest: { api: fake.apiBaseUrl, retries: 0 } });
    await expect(client.login('bad')).rejects.toMatchObject({ code: 'TokenInvalid' });
  });
});

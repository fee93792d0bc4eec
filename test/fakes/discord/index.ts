export { DiscordFake, startDiscordFake, type DiscordFakeOptions, type GatewayFrame } from './discord-fake.js';
export { channelPayload, defaultGuild, discordRejects, fakeUser, type FakeChannel, type FakeGuild } from './payloads.js';
export type { RecordedRequest, RouteOverride } from '../recorder.js';

export { APPLICATION_FLAGS, DiscordFake, shardOfGuild, startDiscordFake, type DiscordFakeOptions, type GatewayFrame } from './discord-fake.js';
export { channelPayload, defaultGuild, discordRejects, fakeUser, rolePayload, type FakeChannel, type FakeGuild, type FakeRole } from './payloads.js';
export type { RecordedRequest, RouteOverride } from '../recorder.js';

export { DiscordFake, defaultGuild, fakeUser, startDiscordFake, type DiscordFakeOptions, type FakeChannel, type FakeGuild, type GatewayFrame } from './discord-fake.js';
export type { RecordedRequest, RouteOverride } from '../recorder.js';

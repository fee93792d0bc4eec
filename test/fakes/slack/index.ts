export { APP_ID, SlackFake, startSlackFake, TEAM_ID, type SlackFakeOptions, type SlackMessage, type SocketFrame } from './slack-fake.js';
export type { RecordedRequest, RouteOverride } from '../recorder.js';

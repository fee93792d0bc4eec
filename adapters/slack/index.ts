export { createSlackAdapter, SLACK_CHUNK, SLACK_LONG_REPLY, type SlackAdapter } from './adapter.js';
export { slackCard } from './card.js';
export { inboundFromSlack, type SlackMessageEvent } from './inbound.js';

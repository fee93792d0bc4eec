export { createDiscordAdapter, DISCORD_INTENTS, DISCORD_LONG_REPLY, DISCORD_MESSAGE_LIMIT, type DiscordAdapter } from './adapter.js';
export { discordCard } from './card.js';
export { inboundFromDiscord } from './inbound.js';

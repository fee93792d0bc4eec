import { WEB_LOCAL_USER } from './owners.js';

/**
 * How a person is named to the people in a conversation on `provider`, the same way on a card and
 * in the lines under it: a platform mention on Discord and Slack, "you" for the web chat's one
 * local user. Decisions are recorded as `<provider>:<userId>` (`cli:<operator>` for the CLI).
 */
export function personIn(provider: string, userId: string): string {
  if (provider === 'web') return userId === WEB_LOCAL_USER ? 'you' : userId;
  if (provider === 'discord' || provider === 'slack') return `<@${userId}>`;
  return userId;
}

/** Who decided, named for a conversation on `provider`; a decider from elsewhere (the CLI) as recorded. */
export function deciderIn(provider: string, decidedBy: string): string {
  const colon = decidedBy.indexOf(':');
  if (colon < 0) return personIn(provider, decidedBy);
  return decidedBy.slice(0, colon) === provider ? personIn(provider, decidedBy.slice(colon + 1)) : decidedBy;
}

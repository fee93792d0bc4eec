// Polls on Slack, which has none of its own: one message with the question and the counts, and
// one button per option (`warden-poll:<option>`, the poll id as the value). The votes are the
// store's (src/tools/core/message/polls.ts); a click is judged by `pollVoteRefusal` and then
// whether the bot still sees the poll's channel, and the message is rewritten with the counts.
import type { webApi } from '@slack/bolt';
import type { Logger } from '../../src/log/log.js';
import type { ChannelKind } from '../../src/tools/core/message/actions.js';
import { decodePollClick, pollActionId, pollTally, pollVoteRefusal, type PollClick, type PollRecord, type PollStore } from '../../src/tools/core/message/polls.js';
import { escapeMrkdwn } from './card.js';

const FOOTER = 'Click an option to vote: one vote each; clicking another option changes yours.';

/** The poll message (text for notifications and for `read`, blocks for people), with `counts`. */
export function slackPollMessage(poll: Pick<PollRecord, 'id' | 'question' | 'options'>, counts: readonly number[]): { text: string; blocks: Array<Record<string, unknown>> } {
  const tally = pollTally({ question: escapeMrkdwn(poll.question), options: poll.options.map(escapeMrkdwn) }, counts);
  return {
    text: `${tally}\n${FOOTER}`,
    blocks: [
      { type: 'section', text: { type: 'mrkdwn', text: tally } },
      {
        type: 'actions',
        block_id: 'warden-poll',
        elements: poll.options.map((o, i) => ({ type: 'button', action_id: pollActionId(i), value: poll.id, text: { type: 'plain_text', text: o.slice(0, 75) } })),
      },
      { type: 'context', elements: [{ type: 'mrkdwn', text: FOOTER }] },
    ],
  };
}

/**
 * One click on a poll button: a vote when the poll exists, the click came from its message in
 * its channel, the option exists, the poll is open and the bot still sees the channel;
 * otherwise refused quietly (logged, nothing shown, nothing stored). Returns why it was refused.
 */
export async function votePollClick(
  click: PollClick,
  deps: { polls: PollStore; web: webApi.WebClient; channelKind: (channel: string) => Promise<ChannelKind | undefined>; logger: Logger; now?: () => number },
): Promise<string | undefined> {
  const now = deps.now ?? Date.now;
  const refuse = (reason: string) => {
    deps.logger.info({ reason, userId: click.userId, channelId: click.channelId, messageId: click.messageId, value: click.value }, 'poll click refused');
    return reason;
  };
  const decoded = decodePollClick(click);
  if (!decoded) return refuse('not a poll button');
  const poll = await deps.polls.get(decoded.pollId);
  const refused = pollVoteRefusal(poll?.provider === 'slack' ? poll : undefined, click, decoded.option, now());
  if (refused) return refuse(refused);
  if ((await deps.channelKind(poll!.channelId)) === undefined) return refuse('the bot cannot see the poll’s channel');
  await deps.polls.vote(poll!.id, click.userId, decoded.option, now());
  // Two instances (or two clicks here) updating the message at once may land their updates in
  // either order. Each updater therefore shows the counts it read after its own vote, and after
  // its update has landed (Slack answers once it is applied) reads them again, repeating until
  // what it reads is what it last showed. So the message converges on the final counts: the last
  // vote's updater shows them (everything it reads comes after that vote), and any update with
  // other counts landing after that is followed by its updater's re-read, which finds the final
  // counts and shows them. No cap on the rounds (a cap would break that): a round after the first
  // happens only when a vote changed the counts during the round before, so the rounds end with
  // the votes. An update that fails ends this click's rounds (logged by the caller).
  let shown: string | undefined;
  for (;;) {
    const counts = await deps.polls.counts(poll!.id, poll!.options.length);
    if (counts.join() === shown) break;
    await deps.web.chat.update({ channel: poll!.channelId, ts: poll!.messageId!, ...slackPollMessage(poll!, counts) });
    shown = counts.join();
  }
  return undefined;
}

// The message tool's polls where the platform has none of its own (Slack): a message with one
// button per option, the votes kept in the store (`polls`, `poll_votes`), so a restart or
// another instance sharing the store counts the same votes. One vote per person per poll: a
// click on another option replaces it (one conditional upsert, so two clicks racing on two
// instances still leave one vote). A click is taken only for a poll this store knows, on the
// very message and channel it was posted in, on an option it has, while it is open; anything
// else is refused quietly (the clicker gets nothing, the log says why).
import type { Db } from '../../../store/db.js';
import type { FeatureMigrations, Migration } from '../../../store/migrations.js';

/**
 * Prefix of a poll button's action id (`warden-poll:<option>`; the poll id is the button's
 * value). Distinct from the approval (`warden_approval_`), pairing, secret and ask_user ones,
 * so no click on a poll can reach another handler, nor one of theirs this one.
 */
export const POLL_ACTION_PREFIX = 'warden-poll:';

export interface PollRecord {
  id: string;
  provider: string;
  channelId: string;
  threadId?: string | undefined;
  /** The poll message's platform id, once posted. */
  messageId?: string | undefined;
  question: string;
  options: string[];
  createdAt: number;
  closesAt: number;
}

/** A click as the platform reported it. */
export interface PollClick {
  actionId: string;
  /** The button's value: the poll id. */
  value: string | undefined;
  channelId: string | undefined;
  messageId: string | undefined;
  userId: string;
}

const POLL_ID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;

export const pollActionId = (option: number) => `${POLL_ACTION_PREFIX}${option}`;

/** The option index and poll id a click names, or undefined when it is not a poll button this code made. */
export function decodePollClick(click: Pick<PollClick, 'actionId' | 'value'>): { pollId: string; option: number } | undefined {
  if (!click.actionId.startsWith(POLL_ACTION_PREFIX)) return undefined;
  const digits = click.actionId.slice(POLL_ACTION_PREFIX.length);
  if (!/^[0-9]{1,2}$/.test(digits) || click.value === undefined || !POLL_ID.test(click.value)) return undefined;
  return { pollId: click.value, option: Number(digits) };
}

/**
 * Why a click is not a vote on `poll` (undefined: it is). `poll` is what the store holds for
 * the id the button carried; everything else is the platform's report of the click.
 */
export function pollVoteRefusal(poll: PollRecord | undefined, click: PollClick, option: number, now: number): string | undefined {
  if (!poll) return 'no such poll';
  if (click.channelId === undefined || click.channelId !== poll.channelId) return 'the click came from another channel than the poll was posted in';
  if (poll.messageId === undefined || click.messageId !== poll.messageId) return 'the click came from another message than the poll';
  if (!Number.isInteger(option) || option < 0 || option >= poll.options.length) return 'no such option';
  if (now >= poll.closesAt) return 'the poll is closed';
  return undefined;
}

/** The poll as text, with its counts (what the message shows and what `read` brings back). */
export function pollTally(poll: Pick<PollRecord, 'question' | 'options'>, counts: readonly number[]): string {
  const lines = poll.options.map((o, i) => `• ${o} — ${counts[i] ?? 0} vote${(counts[i] ?? 0) === 1 ? '' : 's'}`);
  return `📊 ${poll.question}\n${lines.join('\n')}`;
}

const table = (big: string): string => `
  CREATE TABLE polls (
    id          TEXT PRIMARY KEY,
    provider    TEXT NOT NULL,
    channel_id  TEXT NOT NULL,
    thread_id   TEXT,
    message_id  TEXT,              -- the poll message's platform id, once posted
    question    TEXT NOT NULL,
    options     TEXT NOT NULL,     -- JSON array of the option texts
    created_at  ${big} NOT NULL,
    closes_at   ${big} NOT NULL
  );
  CREATE TABLE poll_votes (
    poll_id     TEXT NOT NULL,
    user_id     TEXT NOT NULL,
    choice      INTEGER NOT NULL,      -- the option's index
    voted_at    ${big} NOT NULL,
    PRIMARY KEY (poll_id, user_id)  -- one vote per person per poll
  );
`;

const sqlite001: Migration = { id: 'polls-001', up: (db) => db.exec(table('INTEGER')) };
const postgres001: Migration = { id: 'polls-pg-001', up: (db) => db.exec(table('BIGINT')) };

export const pollMigrations: FeatureMigrations = { feature: 'polls', sqlite: [sqlite001], postgres: [postgres001] };

interface PollRow {
  id: string;
  provider: string;
  channel_id: string;
  thread_id: string | null;
  message_id: string | null;
  question: string;
  options: string;
  created_at: number | string;
  closes_at: number | string;
}

/** The polls and their votes in the store. */
export class PollStore {
  constructor(private readonly db: Db) {}

  async create(p: PollRecord): Promise<void> {
    await this.db.run('INSERT INTO polls (id, provider, channel_id, thread_id, message_id, question, options, created_at, closes_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)', [
      p.id,
      p.provider,
      p.channelId,
      p.threadId ?? null,
      p.messageId ?? null,
      p.question,
      JSON.stringify(p.options),
      p.createdAt,
      p.closesAt,
    ]);
  }

  /** The poll message went out as `messageId`: from now on clicks on it count. */
  async posted(id: string, messageId: string): Promise<void> {
    await this.db.run('UPDATE polls SET message_id = ? WHERE id = ? AND message_id IS NULL', [messageId, id]);
  }

  /** A poll whose message could not be posted. */
  async remove(id: string): Promise<void> {
    await this.db.batch([
      { sql: 'DELETE FROM poll_votes WHERE poll_id = ?', params: [id] },
      { sql: 'DELETE FROM polls WHERE id = ?', params: [id] },
    ]);
  }

  async get(id: string): Promise<PollRecord | undefined> {
    const r = await this.db.get<PollRow>('SELECT * FROM polls WHERE id = ?', [id]);
    if (!r) return undefined;
    return {
      id: r.id,
      provider: r.provider,
      channelId: r.channel_id,
      ...(r.thread_id !== null ? { threadId: r.thread_id } : {}),
      ...(r.message_id !== null ? { messageId: r.message_id } : {}),
      question: r.question,
      options: JSON.parse(r.options) as string[],
      createdAt: Number(r.created_at),
      closesAt: Number(r.closes_at),
    };
  }

  /** `userId`'s vote on `pollId` is `option`, replacing any earlier one (one statement: concurrent clicks leave one vote). */
  async vote(pollId: string, userId: string, option: number, now: number): Promise<void> {
    await this.db.run('INSERT INTO poll_votes (poll_id, user_id, choice, voted_at) VALUES (?, ?, ?, ?) ON CONFLICT (poll_id, user_id) DO UPDATE SET choice = excluded.choice, voted_at = excluded.voted_at', [
      pollId,
      userId,
      option,
      now,
    ]);
  }

  /** The votes per option of a poll with `options` options. */
  async counts(pollId: string, options: number): Promise<number[]> {
    const rows = await this.db.all<{ choice: number | string; n: number | string }>('SELECT choice, COUNT(*) AS n FROM poll_votes WHERE poll_id = ? GROUP BY choice', [pollId]);
    const counts = Array.from({ length: options }, () => 0);
    for (const r of rows) {
      const i = Number(r.choice);
      if (i >= 0 && i < options) counts[i] = Number(r.n);
    }
    return counts;
  }
}

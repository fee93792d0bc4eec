import type { Conversation } from './turn-context.js';
import type { ChatType } from '../policy/context.js';
import type { Db } from '../store/db.js';
import type { Migration } from '../store/migrations.js';

/**
 * The conversation each session was created by, on disk. A turn Warden starts in a session
 * without a message of its own (`sessions_send`) takes its channel policy from here — the
 * guild, the channel's id and name, the thread — instead of guessing it from the session key,
 * and a key no conversation ever created has no row and is refused.
 *
 * Only the router writes rows, from messages the chat platforms delivered; the sender who
 * created the session is kept for the record, never as the one a later turn acts for.
 */
export const sessionContextsMigration: Migration = {
  id: 'agent-002-session-contexts',
  async up(db) {
    await db.exec(`
      CREATE TABLE session_contexts (
        session_key   TEXT PRIMARY KEY,
        agent_id      TEXT NOT NULL,
        provider      TEXT NOT NULL,
        chat          TEXT NOT NULL CHECK (chat IN ('dm', 'channel', 'thread')),
        guild_id      TEXT,
        guild_name    TEXT,
        channel_id    TEXT,
        channel_name  TEXT,
        thread_id     TEXT,
        created_by    TEXT,
        created_at    INTEGER NOT NULL,
        updated_at    INTEGER NOT NULL
      );
    `);
  },
};

export interface StoredSessionContext {
  sessionKey: string;
  agentId: string;
  conversation: Conversation;
  createdBy?: string | undefined;
  createdAt: number;
  updatedAt: number;
}

interface Row {
  session_key: string;
  agent_id: string;
  provider: string;
  chat: ChatType;
  guild_id: string | null;
  guild_name: string | null;
  channel_id: string | null;
  channel_name: string | null;
  thread_id: string | null;
  created_by: string | null;
  created_at: number;
  updated_at: number;
}

/** What the gateway records for every routed message; read by the sessions service. */
export interface SessionContextRecorder {
  record(sessionKey: string, agentId: string, conversation: Conversation, senderId: string | undefined): Promise<void> | void;
}

/** Bounded memory of what was last written per session, so a busy channel does not write each message. */
const REMEMBERED = 10_000;

// The first sender stays; the conversation's names follow renames (the latest message wins).
const UPSERT = `INSERT INTO session_contexts (session_key, agent_id, provider, chat, guild_id, guild_name, channel_id, channel_name, thread_id, created_by, created_at, updated_at)
  VALUES (@session_key, @agent_id, @provider, @chat, @guild_id, @guild_name, @channel_id, @channel_name, @thread_id, @created_by, @now, @now)
  ON CONFLICT (session_key) DO UPDATE SET agent_id = excluded.agent_id, provider = excluded.provider, chat = excluded.chat,
    guild_id = excluded.guild_id, guild_name = excluded.guild_name, channel_id = excluded.channel_id,
    channel_name = excluded.channel_name, thread_id = excluded.thread_id, updated_at = excluded.updated_at`;

export class SessionContextStore implements SessionContextRecorder {
  private readonly written = new Map<string, string>();

  constructor(private readonly db: Db) {}

  async record(sessionKey: string, agentId: string, conversation: Conversation, senderId: string | undefined, now = Date.now()): Promise<void> {
    const c = conversation;
    const row = {
      session_key: sessionKey,
      agent_id: agentId,
      provider: c.provider,
      chat: c.chat,
      guild_id: c.guildId ?? null,
      guild_name: c.guildName ?? null,
      channel_id: c.channelId ?? null,
      channel_name: c.channelName ?? null,
      thread_id: c.threadId ?? null,
    };
    const fingerprint = JSON.stringify(row);
    if (this.written.get(sessionKey) === fingerprint) return;
    this.written.delete(sessionKey);
    this.written.set(sessionKey, fingerprint);
    try {
      await this.db.run(UPSERT, { ...row, created_by: senderId ?? null, now });
    } catch (err) {
      this.written.delete(sessionKey);
      throw err;
    }
    this.written.delete(sessionKey);
    this.written.set(sessionKey, fingerprint);
    if (this.written.size > REMEMBERED) this.written.delete(this.written.keys().next().value as string);
  }

  async get(sessionKey: string): Promise<StoredSessionContext | undefined> {
    const r = await this.db.get<Row>('SELECT * FROM session_contexts WHERE session_key = ?', [sessionKey]);
    return r ? toStored(r) : undefined;
  }

  /** The channel sessions (not threads, not DMs) of an agent on a provider whose channel has this name. */
  async channelsNamed(agentId: string, provider: string, name: string): Promise<StoredSessionContext[]> {
    return (
      await this.db.all<Row>(
        "SELECT * FROM session_contexts WHERE agent_id = ? AND provider = ? AND chat = 'channel' AND lower(channel_name) = lower(CAST(? AS TEXT)) ORDER BY updated_at DESC",
        [agentId, provider, name],
      )
    ).map(toStored);
  }
}

function toStored(r: Row): StoredSessionContext {
  return {
    sessionKey: r.session_key,
    agentId: r.agent_id,
    conversation: {
      provider: r.provider,
      chat: r.chat,
      guildId: r.guild_id ?? undefined,
      guildName: r.guild_name ?? undefined,
      channelId: r.channel_id ?? undefined,
      channelName: r.channel_name ?? undefined,
      threadId: r.thread_id ?? undefined,
    },
    createdBy: r.created_by ?? undefined,
    createdAt: r.created_at,
    updatedAt: r.updated_at,
  };
}

import { replyTargetOf } from '../gateway/deferred-calls.js';
import { ReplyStream } from '../gateway/reply-stream.js';
import type { ChatAdapter, ReplyTarget } from '../gateway/types.js';
import { log } from '../log/log.js';
import type { Db } from '../store/db.js';
import type { FeatureMigrations, Migration } from '../store/migrations.js';
import { nextView, renderCard, type CardView, type ProgressCardArgs, type ProgressCardService } from '../tools/core/progress-card/view.js';
import type { TurnContext } from '../policy/context.js';

/**
 * The progress cards of the running Warden: one open card per session, a message in the
 * session's conversation that each `progress_card` call edits. The writes go through the
 * platform's stream surface and `ReplyStream` — the same post/edit calls and the same throttle
 * (the platform's edit rate) as a streamed reply — so many quick updates coalesce into few
 * edits and the latest state always lands. The message ref and the card are stored, so after a
 * restart the next call edits the same message instead of posting another.
 */
interface OpenCard {
  stream: ReplyStream;
  view: CardView;
  target: ReplyTarget;
}

interface Row {
  provider: string;
  target: string;
  message_ids: string;
  view: string;
}

export class ProgressCards implements ProgressCardService {
  private readonly open = new Map<string, OpenCard>();

  constructor(
    private readonly deps: {
      adapter: (provider: string) => ChatAdapter | undefined;
      db?: Db | undefined;
      /** ReplyStream's timer and clock (tests). */
      now?: () => number;
    },
  ) {}

  async show(input: { sessionKey: string; turn: TurnContext; update: ProgressCardArgs }) {
    let card = this.open.get(input.sessionKey) ?? (await this.restore(input.sessionKey));
    const view = nextView(card?.view, input.update);
    if (!card || card.view.final) {
      const target = replyTargetOf(input.turn);
      if (!target) return { ok: false as const, error: 'this turn has no conversation to show a card in' };
      const opened = this.streamFor(target);
      if (!opened.ok) return opened;
      card = { stream: opened.stream, view, target };
    }
    card.view = view;
    const text = renderCard(view);
    if (view.final) {
      this.open.delete(input.sessionKey);
      // The final state goes out under the same throttle as every update (a streamed reply's
      // finish writes at once; a card's close must not break the platform's edit rate), and
      // finish then only confirms it (an identical text is not written again).
      card.stream.replace(text);
      await card.stream.settled();
      const shown = await card.stream.finish(text);
      await this.forget(input.sessionKey);
      if (!shown) return { ok: false as const, error: 'the card could not be written on the platform' };
      return { ok: true as const, state: 'closed' as const, messageId: card.stream.messages.ids[0] };
    }
    const first = card.stream.messages.ids.length === 0;
    this.open.set(input.sessionKey, card);
    card.stream.replace(text);
    // The first write is never held back: wait for it, so the message exists (and is stored) when the call returns.
    if (first) await card.stream.settled();
    const ids = card.stream.messages.ids;
    if (ids.length === 0) {
      this.open.delete(input.sessionKey);
      return { ok: false as const, error: 'the card could not be posted on the platform' };
    }
    await this.remember(input.sessionKey, card);
    return { ok: true as const, state: 'open' as const, messageId: ids[0] };
  }

  private streamFor(target: ReplyTarget, resume?: { ids: readonly string[]; shown: readonly string[] }): { ok: true; stream: ReplyStream } | { ok: false; error: string } {
    const adapter = this.deps.adapter(target.provider);
    const surface = adapter?.streamTo?.(target);
    if (!surface) return { ok: false, error: `no ${target.provider} adapter here can edit a message in place` };
    return { ok: true, stream: new ReplyStream(surface, { ...(this.deps.now ? { now: this.deps.now } : {}), resume }) };
  }

  private async remember(sessionKey: string, card: OpenCard): Promise<void> {
    if (!this.deps.db) return;
    const params = { key: sessionKey, provider: card.target.provider, target: JSON.stringify(card.target), ids: JSON.stringify(card.stream.messages.ids), view: JSON.stringify(card.view), now: Date.now() };
    try {
      await this.deps.db.run(
        `INSERT INTO progress_cards (session_key, provider, target, message_ids, view, updated_at) VALUES (@key, @provider, @target, @ids, @view, @now)
         ON CONFLICT (session_key) DO UPDATE SET provider = excluded.provider, target = excluded.target, message_ids = excluded.message_ids, view = excluded.view, updated_at = excluded.updated_at`,
        params,
      );
    } catch (err) {
      log.warn({ err, sessionKey }, 'a progress card could not be stored; after a restart it is posted anew');
    }
  }

  private async forget(sessionKey: string): Promise<void> {
    await this.deps.db?.run('DELETE FROM progress_cards WHERE session_key = ?', [sessionKey]).catch((err: unknown) => log.warn({ err, sessionKey }, 'a closed progress card stayed stored'));
  }

  /** The session's card as an earlier process left it, resumed on the same message. */
  private async restore(sessionKey: string): Promise<OpenCard | undefined> {
    const row = await this.deps.db?.get<Row>('SELECT provider, target, message_ids, view FROM progress_cards WHERE session_key = ?', [sessionKey]);
    if (!row) return undefined;
    try {
      const target = JSON.parse(row.target) as ReplyTarget;
      const ids = JSON.parse(row.message_ids) as string[];
      const view = JSON.parse(row.view) as CardView;
      const opened = this.streamFor(target, { ids, shown: ids.map((_, i) => (i === 0 ? renderCard(view) : '')) });
      if (!opened.ok) return undefined;
      return { stream: opened.stream, view, target };
    } catch (err) {
      log.warn({ err, sessionKey }, 'a stored progress card could not be read; a new one is posted');
      return undefined;
    }
  }
}

const sqlite001: Migration = {
  id: 'progress-cards-001',
  async up(db) {
    await db.exec(`CREATE TABLE progress_cards (
      session_key  TEXT PRIMARY KEY,
      provider     TEXT NOT NULL,
      target       TEXT NOT NULL,  -- JSON ReplyTarget
      message_ids  TEXT NOT NULL,  -- JSON string[]
      view         TEXT NOT NULL,  -- JSON CardView
      updated_at   INTEGER NOT NULL
    )`);
  },
};

const postgres001: Migration = {
  id: 'progress-cards-pg-001',
  async up(db) {
    await db.exec(`CREATE TABLE progress_cards (
      session_key  TEXT PRIMARY KEY,
      provider     TEXT NOT NULL,
      target       TEXT NOT NULL,
      message_ids  TEXT NOT NULL,
      view         TEXT NOT NULL,
      updated_at   BIGINT NOT NULL
    )`);
  },
};

export const progressCardsMigrations: FeatureMigrations = { feature: 'progress-cards', sqlite: [sqlite001], postgres: [postgres001] };

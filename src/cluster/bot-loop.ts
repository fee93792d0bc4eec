import type { Db } from '../store/db.js';
import type { FeatureMigrations, Migration } from '../store/migrations.js';

/**
 * The bot loop breaker's count, per conversation (OpenClaw's bot-loop protection): at most
 * `maxEventsPerWindow` bot turns within `windowSeconds`; past that, bots are dropped for
 * `cooldownSeconds`. A person speaking in the conversation resets it. Kept in the store, so two
 * instances on one PostgreSQL count one conversation's bot turns together: each turn is one
 * transaction holding the conversation's row lock (SQLite: the write lock), so racing instances
 * take turns one after the other and never both take the last one.
 */
const table = (bigint: string) => `
  CREATE TABLE bot_loops (
    key            TEXT PRIMARY KEY,
    events         TEXT NOT NULL,
    cooldown_until ${bigint} NOT NULL
  );
`;

const sqlite001: Migration = { id: 'botloop-001-counts', up: (db) => db.exec(table('INTEGER')) };
const pg001: Migration = { id: 'botloop-pg-001-counts', up: (db) => db.exec(table('BIGINT')) };
export const botLoopMigrations: FeatureMigrations = { feature: 'bot-loop', sqlite: [sqlite001], postgres: [pg001] };

export interface BotLoopLimits {
  maxEventsPerWindow: number;
  windowSeconds: number;
  cooldownSeconds: number;
}

export interface BotLoopState {
  /** When the bot turns within the window were taken (ms). */
  events: number[];
  cooldownUntil: number;
}

/** One bot turn asked for at `now`: whether it may be taken, and the state after. Pure. */
export function botLoopStep(state: BotLoopState, now: number, limits: BotLoopLimits): { allowed: boolean; next: BotLoopState } {
  if (state.cooldownUntil > now) return { allowed: false, next: state };
  const events = state.events.filter((t) => now - t < limits.windowSeconds * 1000);
  if (events.length >= limits.maxEventsPerWindow) return { allowed: false, next: { events: [], cooldownUntil: now + limits.cooldownSeconds * 1000 } };
  return { allowed: true, next: { events: [...events, now], cooldownUntil: 0 } };
}

/** What the access gate counts bot turns with: this store, or a process's memory. */
export interface BotLoopCounter {
  take(key: string, limits: BotLoopLimits, now: number): Promise<boolean>;
  reset(key: string): Promise<void>;
}

export class BotLoopStore implements BotLoopCounter {
  constructor(private readonly db: Db) {}

  async take(key: string, limits: BotLoopLimits, now: number): Promise<boolean> {
    return this.db.tx(async () => {
      await this.db.run("INSERT INTO bot_loops (key, events, cooldown_until) VALUES (?, '[]', 0) ON CONFLICT DO NOTHING", [key]);
      const row = await this.db.get<{ events: string; cooldown_until: number }>(`SELECT events, cooldown_until FROM bot_loops WHERE key = ? ${this.db.forUpdate}`, [key]);
      const state: BotLoopState = { events: parseEvents(row?.events), cooldownUntil: Number(row?.cooldown_until ?? 0) };
      const { allowed, next } = botLoopStep(state, now, limits);
      await this.db.run('UPDATE bot_loops SET events = ?, cooldown_until = ? WHERE key = ?', [JSON.stringify(next.events), next.cooldownUntil, key]);
      return allowed;
    });
  }

  async reset(key: string): Promise<void> {
    await this.db.run('DELETE FROM bot_loops WHERE key = ?', [key]);
  }
}

function parseEvents(raw: string | undefined): number[] {
  try {
    const parsed: unknown = JSON.parse(raw ?? '[]');
    return Array.isArray(parsed) ? parsed.filter((t): t is number => typeof t === 'number') : [];
  } catch {
    return [];
  }
}

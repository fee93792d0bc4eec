import type { Database } from 'better-sqlite3';
import type { ApprovalCardStore, CardRef } from '../../adapters/common/card-store.js';
import type { Migration } from '../store/migrations.js';

/** Where each approval card was posted, so a restarted process can still edit it. */
export const gatewayCardsMigration: Migration = {
  id: 'gateway-001-approval-cards',
  up(db) {
    db.exec(`
      CREATE TABLE approval_cards (
        approval_id TEXT NOT NULL,
        provider    TEXT NOT NULL,
        channel_id  TEXT NOT NULL,
        message_id  TEXT NOT NULL,
        created_at  INTEGER NOT NULL,
        PRIMARY KEY (approval_id, provider, channel_id, message_id)
      );
    `);
  },
};

/**
 * The adapters' card store on SQLite, one per platform. A card posted before a restart is
 * found again by the approval's recovery, which edits it to Expired or Interrupted instead
 * of leaving clickable buttons behind.
 */
export function sqliteCardStore(db: Database, provider: string): ApprovalCardStore {
  const insert = db.prepare(
    'INSERT OR IGNORE INTO approval_cards (approval_id, provider, channel_id, message_id, created_at) VALUES (?, ?, ?, ?, ?)',
  );
  const select = db.prepare(
    'SELECT channel_id AS channelId, message_id AS messageId FROM approval_cards WHERE approval_id = ? AND provider = ? ORDER BY created_at, rowid',
  );
  return {
    add(approvalId: string, ref: CardRef) {
      insert.run(approvalId, provider, ref.channelId, ref.messageId, Date.now());
    },
    get(approvalId: string): CardRef[] {
      return select.all(approvalId, provider) as CardRef[];
    },
  };
}

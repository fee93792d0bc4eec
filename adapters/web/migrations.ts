import type { Migration } from '../../src/store/migrations.js';

/** Ids of the messages the page sent, so a message sent again after a reconnect runs once. */
export const webInboundMigration: Migration = {
  id: 'web-001-inbound-ids',
  up(db) {
    db.exec(`
      CREATE TABLE web_inbound (
        id           TEXT PRIMARY KEY,
        received_at  INTEGER NOT NULL
      );
      CREATE INDEX web_inbound_by_time ON web_inbound (received_at);
    `);
  },
};


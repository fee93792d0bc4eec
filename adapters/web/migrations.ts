import type { FeatureMigrations, Migration } from '../../src/store/migrations.js';

/** Ids of the messages the page sent, so a message sent again after a reconnect runs once. */
export const webInboundMigration: Migration = {
  id: 'web-001-inbound-ids',
  async up(db) {
    await db.exec(`
      CREATE TABLE web_inbound (
        id           TEXT PRIMARY KEY,
        received_at  INTEGER NOT NULL
      );
      CREATE INDEX web_inbound_by_time ON web_inbound (received_at);
    `);
  },
};

const webInboundPg001: Migration = {
  id: 'web-pg-001-inbound-ids',
  async up(db) {
    await db.exec(`
      CREATE TABLE web_inbound (
        id           TEXT PRIMARY KEY,
        received_at  BIGINT NOT NULL
      );
      CREATE INDEX web_inbound_by_time ON web_inbound (received_at);
    `);
  },
};

export const webMigrations: FeatureMigrations = { feature: 'web', sqlite: [webInboundMigration], postgres: [webInboundPg001] };

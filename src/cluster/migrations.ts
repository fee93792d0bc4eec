import type { FeatureMigrations, Migration } from '../store/migrations.js';

/**
 * Several instances on one store: who is alive (`instances`, a row per running process whose
 * lease its heartbeat extends) and who holds what (`leases`: a conversation's turn, a cron run).
 * `generation` grows at every take-over, so a holder that lost its lease (it paused past the
 * expiry and another took it) can no longer renew or release the new holder's lease.
 * Times are milliseconds of the database server's clock, so instances' clocks never disagree.
 */
const TABLES = `
  CREATE TABLE instances (
    id          TEXT PRIMARY KEY,
    host        TEXT NOT NULL,
    pid         INTEGER NOT NULL,
    role        TEXT NOT NULL CHECK (role IN ('server', 'cli')),
    started_at  BIGINT NOT NULL,
    lease_until BIGINT NOT NULL
  );
  CREATE INDEX instances_live ON instances (lease_until);
  CREATE TABLE leases (
    name        TEXT PRIMARY KEY,
    holder      TEXT NOT NULL,
    generation  BIGINT NOT NULL,
    expires_at  BIGINT NOT NULL
  );
`;

const cluster001: Migration = {
  id: 'cluster-001-instances-leases',
  async up(db) {
    await db.exec(TABLES);
  },
};

/** Which instance runs a cron run, so one that died is told apart from one still working. */
const cluster002: Migration = {
  id: 'cluster-002-cron-run-instance',
  async up(db) {
    await db.exec('ALTER TABLE cron_runs ADD COLUMN instance_id TEXT');
  },
};

/**
 * A conversation's line across instances (`Leases.enqueue`): each message takes a place, in
 * the order the store saw them arrive, and an instance takes the session's lease only when no
 * live instance holds an earlier place — so a conversation's messages run in arrival order
 * whichever instance each reached.
 */
const queueTable = (seq: string): Migration => ({
  id: 'cluster-003-lease-queue',
  async up(db) {
    await db.exec(`
      CREATE TABLE lease_queue (
        seq    ${seq},
        name   TEXT NOT NULL,
        holder TEXT NOT NULL
      );
      CREATE INDEX lease_queue_by_name ON lease_queue (name, seq);
    `);
  },
});

/**
 * A place carries its message (`payload`, the routed message as JSON) so that it survives the
 * instance it reached, and names the instance that runs it (`holder`): the conversation's
 * owner while it is busy, which may be another instance than the one the message reached (a
 * forwarded message). `taken` is 0 until the holder has picked the place up into its queue.
 * A place without a payload runs only where it arrived (files, native commands, the web chat).
 * `placed_at` (the database's clock, ms): a survivor does not run again a dead instance's message
 * whose turn raised an approval since (that approval's take-over continues it).
 */
const cluster004: Migration = {
  id: 'cluster-004-lease-queue-payload',
  async up(db) {
    await db.exec(`
      ALTER TABLE lease_queue ADD COLUMN payload TEXT;
      ALTER TABLE lease_queue ADD COLUMN taken INTEGER NOT NULL DEFAULT 1;
      ALTER TABLE lease_queue ADD COLUMN placed_at BIGINT;
      CREATE INDEX lease_queue_by_holder ON lease_queue (holder, taken);
    `);
  },
};

/**
 * `written` is 1 when the place's message was written to its conversation's transcript in the
 * write that took the place (with the conversation's lease, `Leases.place`'s `written` steps):
 * an instance that takes the place over runs the message without writing it a second time.
 */
const cluster005: Migration = {
  id: 'cluster-005-lease-queue-written',
  async up(db) {
    await db.exec('ALTER TABLE lease_queue ADD COLUMN written INTEGER NOT NULL DEFAULT 0');
  },
};

export const clusterMigrations: FeatureMigrations = {
  feature: 'cluster',
  sqlite: [cluster001, cluster002, queueTable('INTEGER PRIMARY KEY AUTOINCREMENT'), cluster004, cluster005],
  postgres: [cluster001, cluster002, queueTable('BIGSERIAL PRIMARY KEY'), cluster004, cluster005],
};

/**
 * A full-text index of an agent's memory files in SQLite FTS5, ranked with bm25.
 *
 * Incremental: a file is re-read only when its size or mtime differs from what the index
 * recorded; files that disappeared are dropped. One database may hold several workspaces
 * (rows are keyed by the workspace's real path). Files are read through the workspace guard.
 */
import Database from 'better-sqlite3';
import { log } from '../../../log/log.js';
import { sniffFileKind } from '../fs/file-kind.js';
import { readVerified } from '../fs/workspace-io.js';
import { realpath } from 'node:fs/promises';
import path from 'node:path';
import { chunkMarkdown } from './memory-chunks.js';
import { listMemoryFiles } from './memory-paths.js';

/** Memory files larger than this are skipped (and reported), not indexed. */
export const MAX_MEMORY_FILE_BYTES = 4 * 1024 * 1024;

export interface SyncReport {
  /** Files (re)read and indexed in this pass. */
  indexed: string[];
  /** Files whose size and mtime had not changed, so they were not read. */
  unchanged: number;
  removed: string[];
  skipped: Array<{ path: string; reason: string }>;
  truncated: boolean;
}

export interface MemoryHit {
  path: string;
  startLine: number;
  endLine: number;
  heading: string;
  text: string;
  /** bm25 relevance, higher is better. */
  score: number;
}

/** Turns free text into an FTS5 query: each word quoted (no operators reach FTS5), OR-joined. */
export function toFtsQuery(text: string): string | undefined {
  const words = [...new Set((text.toLowerCase().match(/[\p{L}\p{N}_]+/gu) ?? []).filter((w) => w.length > 0))];
  if (words.length === 0) return undefined;
  return words.map((w) => `"${w}"`).join(' OR ');
}

const yieldToLoop = (): Promise<void> => new Promise((resolve) => setImmediate(resolve));

export class MemoryIndex {
  private readonly db: Database.Database;

  /** `file` is a SQLite path, or `:memory:` for an index that lives as long as the process. */
  constructor(file: string) {
    this.db = new Database(file);
    this.db.pragma('journal_mode = WAL');
    this.db.exec(`
      CREATE TABLE IF NOT EXISTS memory_files (
        workspace TEXT NOT NULL, path TEXT NOT NULL, mtime_ms REAL NOT NULL, size INTEGER NOT NULL,
        PRIMARY KEY (workspace, path)
      );
      CREATE VIRTUAL TABLE IF NOT EXISTS memory_chunks USING fts5(
        text, heading, workspace UNINDEXED, path UNINDEXED, start_line UNINDEXED, end_line UNINDEXED,
        tokenize = 'unicode61 remove_diacritics 2'
      );
    `);
  }

  close(): void {
    this.db.close();
  }

  /** Brings the index of `workspaceDir` up to date with the files on disk. */
  async sync(workspaceDir: string): Promise<SyncReport> {
    const workspace = await realpath(path.resolve(workspaceDir)).catch(() => undefined);
    const report: SyncReport = { indexed: [], unchanged: 0, removed: [], skipped: [], truncated: false };
    if (workspace === undefined) return report;
    const listing = await listMemoryFiles(workspace);
    report.skipped.push(...listing.refused);
    report.truncated = listing.truncated;

    const known = new Map<string, { mtime_ms: number; size: number }>(
      (this.db.prepare('SELECT path, mtime_ms, size FROM memory_files WHERE workspace = ?').all(workspace) as Array<{ path: string; mtime_ms: number; size: number }>).map((r) => [
        r.path,
        r,
      ]),
    );
    const replace = this.db.transaction((rel: string, mtimeMs: number, size: number, chunks: ReturnType<typeof chunkMarkdown>) => {
      this.db.prepare('DELETE FROM memory_chunks WHERE workspace = ? AND path = ?').run(workspace, rel);
      const insert = this.db.prepare('INSERT INTO memory_chunks (text, heading, workspace, path, start_line, end_line) VALUES (?, ?, ?, ?, ?, ?)');
      for (const c of chunks) insert.run(c.text, c.heading, workspace, rel, c.startLine, c.endLine);
      this.db.prepare('INSERT OR REPLACE INTO memory_files (workspace, path, mtime_ms, size) VALUES (?, ?, ?, ?)').run(workspace, rel, mtimeMs, size);
    });

    const present = new Set<string>();
    for (const file of listing.files) {
      // Each file is indexed in its own turn of the event loop: a large memory folder must not
      // hold every conversation while it is read.
      await yieldToLoop();
      const st = file.stat!;
      const before = known.get(file.rel);
      if (before && before.mtime_ms === st.mtimeMs && before.size === st.size) {
        present.add(file.rel);
        report.unchanged++;
        continue;
      }
      const read = await readVerified(file, MAX_MEMORY_FILE_BYTES);
      if (!read.ok) {
        report.skipped.push({ path: file.rel, reason: read.message });
        continue;
      }
      if (sniffFileKind(read.data).kind !== 'text') {
        report.skipped.push({ path: file.rel, reason: 'not a text file' });
        continue;
      }
      present.add(file.rel);
      replace(file.rel, read.stat.mtimeMs, read.stat.size, chunkMarkdown(read.data.toString('utf8')));
      report.indexed.push(file.rel);
    }

    const drop = this.db.transaction((rel: string) => {
      this.db.prepare('DELETE FROM memory_chunks WHERE workspace = ? AND path = ?').run(workspace, rel);
      this.db.prepare('DELETE FROM memory_files WHERE workspace = ? AND path = ?').run(workspace, rel);
    });
    for (const rel of known.keys()) {
      if (present.has(rel)) continue;
      drop(rel);
      report.removed.push(rel);
    }
    if (report.indexed.length > 0 || report.removed.length > 0) log.debug({ workspace, indexed: report.indexed.length, removed: report.removed.length }, 'memory index updated');
    return report;
  }

  /** Best matches for `query` in `workspaceDir`'s memory (call `sync` first). */
  async search(workspaceDir: string, query: string, limit: number): Promise<MemoryHit[]> {
    const fts = toFtsQuery(query);
    const workspace = await realpath(path.resolve(workspaceDir)).catch(() => undefined);
    if (fts === undefined || workspace === undefined) return [];
    // Heading matches count double: a section title is a strong signal of what it holds.
    const rows = this.db
      .prepare(
        `SELECT path, start_line, end_line, heading, text, bm25(memory_chunks, 1.0, 2.0) AS rank
         FROM memory_chunks WHERE memory_chunks MATCH ? AND workspace = ?
         ORDER BY rank, path, start_line LIMIT ?`,
      )
      .all(fts, workspace, limit) as Array<{ path: string; start_line: number; end_line: number; heading: string; text: string; rank: number }>;
    return rows.map((r) => ({ path: r.path, startLine: r.start_line, endLine: r.end_line, heading: r.heading, text: r.text, score: -r.rank }));
  }
}

import { createHash } from 'node:crypto';
import type { LoadedConfig } from '../config/index.js';

/** The config a running Warden serves new turns with: one immutable snapshot at a time. */
export interface ConfigSnapshot {
  readonly loaded: LoadedConfig;
  /** 1 at start, +1 for each applied change. */
  readonly version: number;
  readonly appliedAt: number;
}

/** Holds the current snapshot; a reload replaces it, nothing edits it. */
export class LiveConfig {
  private snapshot: ConfigSnapshot;
  /** The hash of the file text the current snapshot was read from (or written as). */
  private fileHash: string | undefined;

  constructor(initial: LoadedConfig, fileText?: string) {
    this.snapshot = Object.freeze({ loaded: initial, version: 1, appliedAt: Date.now() });
    this.fileHash = fileText === undefined ? undefined : hashText(fileText);
  }

  current(): ConfigSnapshot {
    return this.snapshot;
  }

  replace(loaded: LoadedConfig, fileText?: string): ConfigSnapshot {
    this.snapshot = Object.freeze({ loaded, version: this.snapshot.version + 1, appliedAt: Date.now() });
    if (fileText !== undefined) this.fileHash = hashText(fileText);
    return this.snapshot;
  }

  /** Whether `text` is what the current snapshot came from (a write of our own, seen by the watcher). */
  isCurrentText(text: string): boolean {
    return this.fileHash === hashText(text);
  }

  /** Records file text that means the current snapshot (an unchanged or equivalent edit). */
  noteText(text: string): void {
    this.fileHash = hashText(text);
  }
}

export const hashText = (text: string): string => createHash('sha256').update(text).digest('hex');

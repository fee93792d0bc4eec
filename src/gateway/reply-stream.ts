import { chunkText } from './chunk-text.js';
import { log } from '../log/log.js';

/**
 * What a platform gives a streamed reply: post a message, edit it, remove it. The adapter
 * knows its limits; the throttling, coalescing and continuation are decided here, once for
 * every platform.
 */
export interface StreamSurface {
  /** Characters per message; longer text continues in the next message. */
  limit: number;
  /**
   * Least time between two writes of one stream (the platform's edit rate). 0: write every
   * change as it comes (the web chat), still one write at a time.
   */
  minIntervalMs: number;
  /** Posts a new message; answers its id. */
  post(text: string): Promise<string>;
  edit(id: string, text: string): Promise<void>;
  /** Removes a message the final text no longer needs; without it the message is emptied to "…". */
  remove?(id: string): Promise<void>;
  /** The stream ended showing `text` in `ids` (the web chat records the reply in its history). */
  complete?(ids: readonly string[], text: string): Promise<void>;
}

export interface StreamStats {
  posts: number;
  edits: number;
  removes: number;
  /** `Date.now()` when the first text (or progress line) was handed to the platform and answered. */
  firstVisibleAt?: number | undefined;
  /** A write failed: streaming stopped there; `finish` tries the final text once more. */
  failed: boolean;
}

export interface ReplyStreamOptions {
  now?: () => number;
  /** A timer for the throttle; tests drive it. */
  setTimer?: (fn: () => void, ms: number) => { cancel(): void };
  /** Messages an earlier stream posted and what they show (a progress card after a restart): edited, not posted again. */
  resume?: { ids: readonly string[]; shown: readonly string[] } | undefined;
}

const defaultTimer = (fn: () => void, ms: number) => {
  const t = setTimeout(fn, ms);
  return { cancel: () => clearTimeout(t) };
};

/**
 * One reply streamed into messages edited in place. Text is appended as the model writes it;
 * a progress line ("running `exec` …") shows while a tool runs and is replaced by what comes
 * next. Writes are serialised and throttled to `minIntervalMs`: deltas arriving meanwhile are
 * coalesced into the next write, which shows the latest text. The first write is never held
 * back (time to first visible token). `finish` makes the messages show exactly the final text,
 * split at the platform's limit as a plain reply would be.
 */
export class ReplyStream {
  private text = '';
  private progressLine: string | undefined;
  /** Message ids, in order, and what each one shows now. */
  private readonly ids: string[] = [];
  private readonly shown: string[] = [];
  private writing: Promise<void> | undefined;
  private timer: { cancel(): void } | undefined;
  private lastWriteAt = Number.NEGATIVE_INFINITY;
  private finished = false;
  private nextRound = false;
  readonly stats: StreamStats = { posts: 0, edits: 0, removes: 0, failed: false };
  private readonly now: () => number;
  private readonly setTimer: NonNullable<ReplyStreamOptions['setTimer']>;

  constructor(
    private readonly surface: StreamSurface,
    options: ReplyStreamOptions = {},
  ) {
    this.now = options.now ?? Date.now;
    this.setTimer = options.setTimer ?? defaultTimer;
    if (options.resume && options.resume.ids.length === options.resume.shown.length) {
      this.ids.push(...options.resume.ids);
      this.shown.push(...options.resume.shown);
    }
  }

  /** The messages this stream writes, in order, and what each shows now (to resume it later). */
  get messages(): { ids: readonly string[]; shown: readonly string[] } {
    return { ids: [...this.ids], shown: [...this.shown] };
  }

  /** Replaces the whole text (a card's next state), written under the same throttle as `append`. */
  replace(text: string): void {
    if (this.finished) return;
    this.text = text;
    this.nextRound = false;
    this.progressLine = undefined;
    this.schedule();
  }

  /** Resolves once no write is running or waiting (the latest text is on the platform). */
  async settled(): Promise<void> {
    while (this.writing || this.timer) {
      if (this.writing) await this.writing;
      else await new Promise((r) => setTimeout(r, 20));
    }
  }

  /** Whether anything reached the platform: without it the caller sends the reply as usual. */
  get started(): boolean {
    return this.ids.length > 0;
  }

  append(delta: string): void {
    if (this.finished || delta === '') return;
    if (this.nextRound) this.text = '';
    this.nextRound = false;
    this.text += delta;
    this.progressLine = undefined;
    this.schedule();
  }

  /**
   * A new model round after tool calls: its text replaces the last round's when it starts (the
   * reply is the last round's text); until then the earlier text and the progress line stay.
   */
  newRound(): void {
    this.nextRound = true;
  }

  /** Shows a progress line under the text until the next text; undefined clears it. */
  progress(line: string | undefined): void {
    if (this.finished || this.progressLine === line) return;
    this.progressLine = line;
    this.schedule();
  }

  /**
   * Ends the stream with exactly `final` (the model's reply). True when the messages show it;
   * false when nothing was streamed or a write failed, and the caller sends `final` itself.
   */
  async finish(final: string): Promise<boolean> {
    this.finished = true;
    this.timer?.cancel();
    this.timer = undefined;
    await this.writing;
    if (!this.started) return false;
    // Exact, whatever the throttle held back or a failed write left (one more try).
    const ids = [...this.ids];
    if (!(await this.tryRender(final === '' ? [] : chunkText(final, this.surface.limit)))) return false;
    try {
      await this.surface.complete?.(ids, final);
    } catch (err) {
      log.warn({ err }, 'a streamed reply could not be recorded');
    }
    return true;
  }

  private display(): string {
    const progress = this.progressLine === undefined ? '' : `_${this.progressLine}_`;
    if (progress === '') return this.text;
    return this.text === '' ? progress : `${this.text}\n\n${progress}`;
  }

  private schedule(): void {
    if (this.writing || this.timer || this.stats.failed) return;
    const wait = this.lastWriteAt + this.surface.minIntervalMs - this.now();
    if (wait <= 0) {
      this.flush();
      return;
    }
    this.timer = this.setTimer(() => {
      this.timer = undefined;
      this.flush();
    }, wait);
  }

  private flush(): void {
    if (this.finished) return;
    const text = this.display();
    if (text === '') return;
    // What fits now; the last chunk may still grow, earlier ones are settled by the splitter.
    const chunks = chunkText(text, this.surface.limit);
    this.writing = this.tryRender(chunks).then(() => {
      this.writing = undefined;
      // Text that came while writing goes out with the next write.
      if (!this.finished && !this.showing(chunkText(this.display(), this.surface.limit))) this.schedule();
    });
  }

  private showing(chunks: string[]): boolean {
    return chunks.length === this.shown.length && chunks.every((c, i) => c === this.shown[i]);
  }

  /** Makes the messages show `chunks`: edit what differs, post what is missing, remove the rest. */
  private async tryRender(chunks: string[]): Promise<boolean> {
    try {
      for (const [i, chunk] of chunks.entries()) {
        if (i < this.ids.length) {
          if (this.shown[i] === chunk) continue;
          await this.surface.edit(this.ids[i]!, chunk);
          this.stats.edits++;
          this.shown[i] = chunk;
        } else {
          const id = await this.surface.post(chunk);
          this.stats.posts++;
          this.stats.firstVisibleAt ??= this.now();
          this.ids.push(id);
          this.shown.push(chunk);
        }
        this.lastWriteAt = this.now();
      }
      while (this.ids.length > chunks.length) {
        const id = this.ids.pop()!;
        this.shown.pop();
        if (this.surface.remove) await this.surface.remove(id);
        else await this.surface.edit(id, '…');
        this.stats.removes++;
        this.lastWriteAt = this.now();
      }
      return true;
    } catch (err) {
      this.stats.failed = true;
      log.warn({ err }, 'a streamed reply could not be updated; the final text is sent as a plain reply');
      return false;
    }
  }
}

/** The progress line for a running tool. */
export const toolProgressLine = (tool: string) => `running \`${tool.replaceAll('`', "'")}\` …`;

import type { MediaCapability } from '../config/schema/media-understanding.js';

export type { MediaCapability };

/** One inbound attachment, as the chat adapters hand it over. */
export interface Attachment {
  /** Stable id for caching (a platform attachment id); default: a hash of the bytes. */
  id?: string | undefined;
  /** File name as sent, used for the extension a transcriber expects. */
  name?: string | undefined;
  contentType?: string | undefined;
  /** The bytes; adapters download before handing over (URLs are never fetched here). */
  data: Buffer;
}

/** How one attachment was understood, or why it was not. */
export type AttachmentOutcome =
  | { status: 'understood'; capability: MediaCapability; text: string; by: string; cached: boolean; echo?: string | undefined }
  | { status: 'skipped'; capability: MediaCapability | undefined; reason: string }
  | { status: 'failed'; capability: MediaCapability; attempts: Array<{ by: string; error: string }> };

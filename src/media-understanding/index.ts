export { candidateEntries, formatUnderstanding, selectAttachments, understandAttachments, type UnderstandingContext } from './understand.js';
export type { Attachment, AttachmentOutcome, MediaCapability } from './types.js';

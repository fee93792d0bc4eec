// The argument schemas of this folder's tools, apart from their implementations: the tool surface
// (src/app/core-descriptors.ts) reads them without loading the tools, and each implementation
// validates its calls against the same object. Keep imports here to constants only.
import { MESSAGE_ACTIONS } from '../../../config/schema/message-actions.js';
export const THREAD_NAME_MAX = 100;

export const POLL_MAX_HOURS = 768;

export const POLL_OPTION_MAX = 55;

export const POLL_QUESTION_MAX = 300;

export const POLL_MAX_OPTIONS = 10;

/** Bounds the tool applies before any request leaves. */
export const READ_MAX_MESSAGES = 50;

export const messageParameters = {
  type: 'object',
  properties: {
    action: { type: 'string', enum: [...MESSAGE_ACTIONS], description: 'What to do (default send). Only the actions enabled in tools.message.actions.allow work.' },
    text: { type: 'string', minLength: 1, maxLength: 8000, description: 'The message to post (send, thread-reply), the new text (edit), or a new thread\'s first message.' },
    provider: { type: 'string', enum: ['discord', 'slack', 'web'], description: 'Platform of the target (default: this conversation’s).' },
    channel: { type: 'string', description: 'Channel id or #name for send; a channel id for other actions (default: this conversation).' },
    threadId: { type: 'string', description: 'The thread inside the channel (send, thread-reply, read).' },
    userId: { type: 'string', description: 'Send a direct message to this user id instead (send only).' },
    messageId: { type: 'string', description: 'The message acted on: a Discord message id or a Slack ts.' },
    emoji: { type: 'string', maxLength: 120, description: 'react: a Unicode emoji or custom name:id on Discord; a shortcode on Slack.' },
    remove: { type: 'boolean', description: 'react: remove the bot\'s reaction instead of adding it.' },
    name: { type: 'string', minLength: 1, maxLength: THREAD_NAME_MAX, description: 'thread-create: the thread name.' },
    question: { type: 'string', minLength: 1, maxLength: POLL_QUESTION_MAX, description: 'poll: the question.' },
    options: { type: 'array', minItems: 2, maxItems: POLL_MAX_OPTIONS, items: { type: 'string', minLength: 1, maxLength: POLL_OPTION_MAX }, description: 'poll: 2–10 answers.' },
    durationHours: { type: 'integer', minimum: 1, maximum: POLL_MAX_HOURS, description: 'poll: how long it runs on Discord (default 24).' },
    limit: { type: 'integer', minimum: 1, maximum: READ_MAX_MESSAGES, description: 'read: how many recent messages (default 20).' },
    fileId: { type: 'string', maxLength: 40, description: 'download-file: the file id read listed.' },
  },
  additionalProperties: false,
} as const;

// The argument schemas of this folder's tools, apart from their implementations: the tool surface
// (src/app/core-descriptors.ts) reads them without loading the tools, and each implementation
// validates its calls against the same object. Keep imports here to constants only.
import { IMAGE_SIZES, SPEECH_FORMATS } from '../../../config/schema/media.js';
/** The speech API's ceiling for one input. */
export const MAX_SPEECH_CHARS = 4_096;

export const MAX_IMAGES = 4;

/** The Images API's own ceiling for gpt-image prompts. */
export const MAX_PROMPT_CHARS = 32_000;

export const DEFAULT_MAX_CHARS = 40_000;

export const pdfParameters = {
  type: 'object',
  properties: {
    path: { type: 'string', description: 'PDF file in the workspace.' },
    pages: { type: 'string', description: 'Pages to read, 1-based: "3", "1-5", "2,4,7-9" or "10-". Default: all (at most 50 per call).' },
    maxChars: { type: 'integer', minimum: 1000, maximum: 200000, description: `Most characters to return (default ${DEFAULT_MAX_CHARS}).` },
  },
  required: ['path'],
  additionalProperties: false,
} as const;

export const imageParameters = {
  type: 'object',
  properties: {
    path: { type: 'string', description: 'Image file in the workspace (PNG, JPEG, GIF or WebP).' },
    prompt: { type: 'string', description: 'What to find out about the image. Default: describe it.' },
  },
  required: ['path'],
  additionalProperties: false,
} as const;

export const imageGenerateParameters = {
  type: 'object',
  properties: {
    prompt: { type: 'string', minLength: 1, maxLength: MAX_PROMPT_CHARS, description: 'What the image should show, in detail.' },
    size: { type: 'string', enum: [...IMAGE_SIZES], description: 'Width x height in pixels (default from the config, usually 1024x1024).' },
    count: { type: 'integer', minimum: 1, maximum: MAX_IMAGES, description: 'How many images (default 1).' },
  },
  required: ['prompt'],
  additionalProperties: false,
} as const;

export const ttsParameters = {
  type: 'object',
  properties: {
    text: { type: 'string', minLength: 1, maxLength: MAX_SPEECH_CHARS, description: 'The text to speak.' },
    voice: { type: 'string', minLength: 1, maxLength: 64, description: 'Voice name (e.g. alloy, coral, sage); default from the config.' },
    format: { type: 'string', enum: [...SPEECH_FORMATS], description: 'Audio file format (default from the config, usually mp3).' },
    instructions: { type: 'string', maxLength: 2_000, description: 'How to speak: tone, pace, accent (models that support it).' },
  },
  required: ['text'],
  additionalProperties: false,
} as const;

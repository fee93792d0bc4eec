import { openaiDialect } from './openai-fake.js';
import { startFakeModelServer, type Dialect, type FakeModelOptions, type FakeModelServer } from './server.js';

/** A 1×1 transparent PNG: what the fake Images API draws unless told otherwise. */
export const FAKE_PNG = Buffer.from('iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNkYPhfDwAChwGA60e6kgAAAABJRU5ErkJggg==', 'base64');

/** What the fake speech endpoint answers: the format and the input, so a test can see both arrived. */
export const fakeSpeech = (format: string, input: string): Buffer => Buffer.from(`FAKE-${format}:${input}`, 'utf8');

const SPEECH_TYPES: Record<string, string> = { mp3: 'audio/mpeg', opus: 'audio/opus', aac: 'audio/aac', flac: 'audio/flac', wav: 'audio/wav', pcm: 'audio/pcm' };

export interface FakeMediaOptions extends FakeModelOptions {
  /** Bytes each generated image carries (default FAKE_PNG). */
  image?: Buffer;
  /** Answer images as URLs instead of base64 (what dall-e does unless asked). */
  imageAsUrl?: boolean;
}

/**
 * OpenAI's Images API (`POST /v1/images/generations`) and Audio speech API
 * (`POST /v1/audio/speech`). Errors are shaped as OpenAI's (scripted `{ kind: 'error' }`).
 */
export function openaiMediaDialect(options: FakeMediaOptions = {}): Dialect {
  return {
    basePath: '/v1',
    matches: (path) => path === '/v1/images/generations' || path === '/v1/audio/speech',
    contextError: openaiDialect.contextError,
    writeError: openaiDialect.writeError,
    async writeReply(res, _reply, request) {
      const body = request.body as Record<string, unknown>;
      if (request.path === '/v1/audio/speech') {
        const format = typeof body.response_format === 'string' ? body.response_format : 'mp3';
        res.writeHead(200, { 'content-type': SPEECH_TYPES[format] ?? 'application/octet-stream' }).end(fakeSpeech(format, String(body.input)));
        return;
      }
      const n = typeof body.n === 'number' ? body.n : 1;
      const image = options.image ?? FAKE_PNG;
      const asUrl = options.imageAsUrl && body.response_format !== 'b64_json';
      const data = Array.from({ length: n }, (_, i) => (asUrl ? { url: `https://images.invalid/${i}.png` } : { b64_json: image.toString('base64') }));
      // gpt-image models report tokens (the prompt in, the images out); dall-e reports none.
      const usage = String(body.model).startsWith('gpt-image') ? { input_tokens: Math.ceil(String(body.prompt).length / 4), output_tokens: 272 * n, total_tokens: 0 } : undefined;
      if (usage) {
        usage.total_tokens = usage.input_tokens + usage.output_tokens;
        request.reported = { inputTokens: usage.input_tokens, outputTokens: usage.output_tokens, cachedInputTokens: 0, cacheWriteTokens: 0, reasoningTokens: 0 };
      }
      res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ created: 0, data, ...(usage ? { usage } : {}) }));
    },
  };
}

export const startFakeOpenAIMedia = (options: FakeMediaOptions = {}): Promise<FakeModelServer> => startFakeModelServer(openaiMediaDialect(options), options);

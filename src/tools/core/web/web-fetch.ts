import type { WardenConfig } from '../../../config/index.js';
import { guardedFetch, urlPolicyFor, type Resolver } from '../../../net/index.js';
import type { ToolImplementation, ToolResult } from '../../types.js';
import { wrapUntrusted } from '../../untrusted.js';
import { extractHtml } from './extract.js';

export interface WebFetchArgs {
  url: string;
  extractMode?: 'markdown' | 'text';
  maxChars?: number;
}

/** Reference B7 defaults. */
export const WEB_FETCH_LIMITS = { defaultMaxChars: 20_000, maxCharsCap: 20_000, maxResponseBytes: 750_000, timeoutMs: 30_000, maxRedirects: 3 };

export interface WebFetchDeps {
  config: WardenConfig;
  /** Test seams (see guardedFetch): a fake DNS and a dialler. */
  resolve?: Resolver;
  dial?: (address: string) => string;
}

const parameters = {
  type: 'object',
  properties: {
    url: { type: 'string', description: 'The http(s) URL to fetch. Private, loopback and cloud-metadata addresses are refused.' },
    extractMode: {
      type: 'string',
      enum: ['markdown', 'text'],
      description: 'markdown (default) keeps headings, links and lists; text strips them.',
    },
    maxChars: {
      type: 'integer',
      minimum: 100,
      maximum: WEB_FETCH_LIMITS.maxCharsCap,
      description: `Most characters of content to return (default ${WEB_FETCH_LIMITS.defaultMaxChars}).`,
    },
  },
  required: ['url'],
  additionalProperties: false,
} as const;

const error = (text: string, details: Record<string, unknown>): ToolResult => ({ content: [{ type: 'text', text }], details: { status: 'error', ...details }, isError: true });

function decode(body: Buffer, contentType: string): string {
  const charset = /charset=([^;]+)/i.exec(contentType)?.[1]?.trim().replace(/^"|"$/g, '');
  try {
    return new TextDecoder(charset || 'utf-8').decode(body);
  } catch {
    return new TextDecoder('utf-8').decode(body);
  }
}

/**
 * web_fetch: GET a public page under the SSRF guard and return its main content as Markdown,
 * wrapped as untrusted data. Private networks can never be enabled for it (only the fake-IP
 * ranges of `tools.web.fetch.ssrfPolicy`).
 */
export function createWebFetchTool(deps: WebFetchDeps): ToolImplementation<WebFetchArgs> {
  return {
    id: 'web_fetch',
    parameters,
    async execute(args, ctx) {
      const maxChars = Math.min(args.maxChars ?? WEB_FETCH_LIMITS.defaultMaxChars, WEB_FETCH_LIMITS.maxCharsCap);
      const mode = args.extractMode ?? 'markdown';
      const policy = urlPolicyFor(deps.config, 'web_fetch');
      const fetched = await guardedFetch(args.url, {
        surface: 'web_fetch',
        policy,
        resolve: deps.resolve,
        dial: deps.dial,
        maxRedirects: WEB_FETCH_LIMITS.maxRedirects,
        maxResponseBytes: WEB_FETCH_LIMITS.maxResponseBytes,
        timeoutMs: WEB_FETCH_LIMITS.timeoutMs,
        signal: ctx.signal,
      });
      if (!fetched.ok) return error(fetched.error, { url: args.url, blocked: fetched.blocked });
      if (fetched.status >= 400) return error(`HTTP ${fetched.status} from ${fetched.url}`, { url: fetched.url, httpStatus: fetched.status });

      const type = fetched.contentType.toLowerCase();
      const text = decode(fetched.body, type);
      let title: string | undefined;
      let content: string;
      let extractor: string;
      if (type.includes('html') || (!type && /^\s*</.test(text))) {
        const extracted = extractHtml(text, fetched.url, mode);
        ({ title, content, extractor } = extracted);
      } else if (type.startsWith('text/') || type.includes('json') || type.includes('xml')) {
        content = text;
        extractor = 'raw';
      } else {
        return error(`Unsupported content type "${fetched.contentType}" at ${fetched.url}: web_fetch reads HTML, text, JSON and XML`, {
          url: fetched.url,
          contentType: fetched.contentType,
        });
      }

      const cut = content.length > maxChars;
      const body = cut ? `${content.slice(0, maxChars)}\n\n[... ${content.length - maxChars} more characters truncated; fetch with a larger maxChars or a narrower page]` : content;
      const header = [title ? `# ${title}` : undefined, `Source: ${fetched.url}`, fetched.truncated ? `(response cut at ${WEB_FETCH_LIMITS.maxResponseBytes} bytes)` : undefined]
        .filter(Boolean)
        .join('\n');
      return {
        content: [{ type: 'text', text: wrapUntrusted(`web:${fetched.url}`, `${header}\n\n${body}`) }],
        details: {
          status: 'ok',
          url: args.url,
          finalUrl: fetched.url,
          httpStatus: fetched.status,
          contentType: fetched.contentType,
          title,
          extractor,
          rawBytes: fetched.body.length,
          chars: content.length,
          truncated: cut || fetched.truncated,
          address: fetched.address,
        },
      };
    },
  };
}

import { Readability } from '@mozilla/readability';
import { parseHTML } from 'linkedom';
import TurndownService from 'turndown';

export interface Extracted {
  title: string | undefined;
  byline: string | undefined;
  /** Markdown (or plain text) of the main content. */
  content: string;
  /** `readability` when an article was found, `page` when the whole body was converted. */
  extractor: 'readability' | 'page';
}

/** Elements whose text is never content: scripts, styles, templates, embedded documents. */
const DROP = ['script', 'style', 'noscript', 'template', 'iframe', 'object', 'embed', 'svg', 'canvas'];

function absolute(href: string | null, base: string): string {
  if (!href) return '';
  try {
    return new URL(href, base).href;
  } catch {
    return href;
  }
}

function turndownFor(baseUrl: string): TurndownService {
  const service = new TurndownService({ headingStyle: 'atx', codeBlockStyle: 'fenced', bulletListMarker: '-' });
  service.remove(DROP as Array<keyof HTMLElementTagNameMap>);
  service.addRule('absoluteLinks', {
    filter: (node) => node.nodeName === 'A' && !!(node as HTMLElement).getAttribute('href'),
    replacement: (content, node) => {
      const href = absolute((node as HTMLElement).getAttribute('href'), baseUrl);
      const text = content.trim();
      if (!text) return '';
      return href.startsWith('javascript:') ? text : `[${text}](${href})`;
    },
  });
  service.addRule('absoluteImages', {
    filter: 'img',
    replacement: (_content, node) => {
      const el = node as HTMLElement;
      const src = absolute(el.getAttribute('src') ?? el.getAttribute('data-src'), baseUrl);
      const alt = (el.getAttribute('alt') ?? '').replace(/[\[\]\n]/g, ' ').trim();
      return src && !src.startsWith('data:') ? `![${alt}](${src})` : alt;
    },
  });
  return service;
}

/**
 * Turns an HTML page into readable Markdown (or text): Readability picks the article, Turndown
 * converts it, links and images are made absolute against the page URL. Pages Readability
 * cannot read are converted whole, minus scripts and styles.
 */
export function extractHtml(html: string, pageUrl: string, mode: 'markdown' | 'text', options: { readability?: boolean } = {}): Extracted {
  const { document } = parseHTML(html);
  const title = document.querySelector('title')?.textContent?.trim() || undefined;
  let article: ReturnType<Readability['parse']> = null;
  try {
    // `tools.web.fetch.readability: false` converts the whole page instead.
    article = options.readability === false ? null : new Readability(document as unknown as Document, { charThreshold: 200 }).parse();
  } catch {
    article = null;
  }
  const extractor = article?.content ? 'readability' : 'page';
  let fragment: string;
  if (article?.content) fragment = article.content;
  else {
    const fresh = parseHTML(html).document;
    for (const tag of DROP) for (const el of Array.from(fresh.querySelectorAll(tag))) el.remove();
    fragment = fresh.body?.innerHTML ?? '';
  }
  const markdown = turndownFor(pageUrl).turndown(fragment).replace(/\n{3,}/g, '\n\n').trim();
  const content = mode === 'text' ? markdownToText(markdown) : markdown;
  return { title: article?.title?.trim() || title, byline: article?.byline?.trim() || undefined, content, extractor };
}

/**
 * Every `[text](url)` (or with `![`, every image) as its text, as `/\[([^\]]*)\]\([^)]*\)/g` with
 * `$1` would write it. Found with indexOf: the page is anyone's, and that pattern scans it to the
 * end again from each `[` that is never closed.
 */
export function linksToText(markdown: string, opener: '[' | '!['): string {
  let out = '';
  let from = 0;
  let at = markdown.indexOf(opener);
  while (at >= 0) {
    const start = at + opener.length;
    const close = markdown.indexOf(']', start);
    if (close < 0) break;
    if (markdown[close + 1] !== '(') {
      // Every opener before this `]` meets it too, and fails the same way.
      at = markdown.indexOf(opener, close + 1);
      continue;
    }
    const end = markdown.indexOf(')', close + 2);
    if (end < 0) break;
    out += markdown.slice(from, at) + markdown.slice(start, close);
    from = end + 1;
    at = markdown.indexOf(opener, from);
  }
  return out + markdown.slice(from);
}

/** Plain text from our own Markdown: links keep their text, emphasis and heading marks go. */
export function markdownToText(markdown: string): string {
  return linksToText(linksToText(markdown, '!['), '[')
    .replace(/^#{1,6}\s+/gm, '')
    .replace(/(\*\*|__)(.*?)\1/g, '$2')
    .replace(/(^|\W)[*_](\S[^*_]*?)[*_](?=\W|$)/g, '$1$2')
    .replace(/^```.*$/gm, '')
    .replace(/\n{3,}/g, '\n\n')
    .trim();
}

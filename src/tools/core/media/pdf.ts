import type { ToolImplementation, ToolResult } from '../../types.js';
import { errorResult, guardResult, textResult } from '../fs/tool-result.js';
import { wrapUntrusted } from '../../untrusted.js';
import { resolveWorkspacePath } from '../fs/workspace.js';
import { readVerified } from '../fs/workspace-io.js';
import { parsePageRange } from './page-range.js';
import { pdfParameters, DEFAULT_MAX_CHARS } from './media-schemas.js';

export const MAX_PDF_BYTES = 50 * 1024 * 1024;
const MAX_PAGES_PER_CALL = 50;

export interface PdfArgs {
  path: string;
  pages?: string;
  maxChars?: number;
}

/**
 * `pdf`: the text of a workspace PDF by page range. The document's words are data, so the
 * text is wrapped as untrusted file content; long output stops at a page boundary with a
 * note saying which pages to ask for next.
 */
export const pdfTool: ToolImplementation<PdfArgs> = {
  id: 'pdf',
  parameters: pdfParameters,
  async execute(args, ctx): Promise<ToolResult> {
    const resolved = await resolveWorkspacePath(ctx.workspaceDir, args.path);
    if (!resolved.ok) return guardResult(resolved, { path: args.path });
    const file = await readVerified(resolved, MAX_PDF_BYTES);
    if (!file.ok) return guardResult(file, { path: resolved.rel });
    if (file.data.subarray(0, 1024).indexOf('%PDF-') === -1) return errorResult(`${resolved.rel} is not a PDF file`, { path: resolved.rel, code: 'not-pdf' });

    let more = false;
    // pdf.js comes in with the first PDF read, not with the tool's definition: its legacy build
    // installs core-js polyfills process-wide (a wrapped JSON.parse among them) and weighs megabytes.
    const { extractPdfText } = await import('./pdf-text.js');
    const extracted = await extractPdfText(new Uint8Array(file.data), (count) => {
      const range = parsePageRange(args.pages, count, MAX_PAGES_PER_CALL);
      if (range.ok) more = range.more;
      return range;
    });
    if (!extracted.ok) return errorResult(`${resolved.rel}: ${extracted.error}`, { path: resolved.rel });
    const { pageCount, pages } = extracted.value;

    const maxChars = args.maxChars ?? DEFAULT_MAX_CHARS;
    const parts: string[] = [];
    let used = 0;
    let lastPage = 0;
    for (const { page, text } of pages) {
      const block = `--- page ${page} of ${pageCount} ---\n${text || '(no text on this page; it may be a scanned image)'}`;
      if (used + block.length > maxChars && parts.length > 0) break;
      parts.push(used + block.length > maxChars ? `${block.slice(0, maxChars - used)}\n[... page cut at maxChars]` : block);
      used += block.length;
      lastPage = page;
    }
    const rest = pages.filter((p) => p.page > lastPage).map((p) => p.page);
    const notes: string[] = [];
    if (rest.length > 0 || more) notes.push(`[More pages remain after page ${lastPage}; call again with pages="${lastPage + 1}-".]`);
    const text = [wrapUntrusted(`file:${resolved.rel}`, parts.join('\n\n')), ...notes].join('\n');
    return textResult(text, { path: resolved.rel, pageCount, pages: pages.filter((p) => p.page <= lastPage).map((p) => p.page) });
  },
};

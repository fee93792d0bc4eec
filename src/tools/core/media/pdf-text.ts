import { getDocument } from 'pdfjs-dist/legacy/build/pdf.mjs';

export interface PdfDocumentText {
  pageCount: number;
  /** Text of each requested page, in order. */
  pages: Array<{ page: number; text: string }>;
}

export type PdfTextResult = { ok: true; value: PdfDocumentText } | { ok: false; error: string };

/**
 * A page's text with blanks before line ends dropped and blank lines folded. The blanks are
 * taken from the start of their run (`(?<![ \t])`): the document's, and a long run without a
 * line end would otherwise be retried from every blank.
 */
export function tidyPageText(text: string): string {
  return text.replace(/(?<![ \t])[ \t]+\n/g, '\n').replace(/\n{3,}/g, '\n\n').trim();
}

/**
 * Extracts the text of some pages with pdf.js (legacy build, which runs on Node 20). Pages are
 * chosen after the page count is known: `select(count)` returns them or an error. Nothing in
 * the document is executed: scripting and font evaluation are off.
 */
export async function extractPdfText(data: Uint8Array, select: (pageCount: number) => { ok: true; pages: number[] } | { ok: false; error: string }): Promise<PdfTextResult> {
  const task = getDocument({ data, isEvalSupported: false, disableFontFace: true, useSystemFonts: false, enableXfa: false, verbosity: 0, stopAtErrors: false });
  let doc;
  try {
    doc = await task.promise;
  } catch (err) {
    const e = err as Error;
    if (e.name === 'PasswordException') return { ok: false, error: 'the PDF is password-protected' };
    return { ok: false, error: `not a readable PDF: ${e.message}` };
  }
  try {
    const chosen = select(doc.numPages);
    if (!chosen.ok) return chosen;
    const pages: PdfDocumentText['pages'] = [];
    for (const n of chosen.pages) {
      const page = await doc.getPage(n);
      const content = await page.getTextContent();
      let text = '';
      for (const item of content.items) {
        if (!('str' in item)) continue;
        text += item.str;
        if (item.hasEOL) text += '\n';
        else if (item.str && !item.str.endsWith(' ')) text += ' ';
      }
      pages.push({ page: n, text: tidyPageText(text) });
      page.cleanup();
    }
    return { ok: true, value: { pageCount: doc.numPages, pages } };
  } finally {
    await doc.destroy();
  }
}

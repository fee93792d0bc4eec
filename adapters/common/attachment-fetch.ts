/**
 * Fetches a file a person posted from the platform's own file host, and nowhere else: the URL
 * comes in the platform's event, but a message's attachment list is data a client could shape,
 * so an address outside `allowedHosts` (or not https, except the loopback test host) is
 * refused, redirects are not followed, and reading stops at `maxBytes`.
 */
export async function fetchAttachment(
  url: string,
  options: { allowedHosts: readonly string[]; maxBytes: number; headers?: Record<string, string>; signal?: AbortSignal | undefined },
): Promise<{ ok: true; data: Buffer } | { ok: false; error: string }> {
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    return { ok: false, error: 'not a URL' };
  }
  const loopbackTest = parsed.protocol === 'http:' && options.allowedHosts.includes(parsed.host) && /^127\.0\.0\.1:\d+$/.test(parsed.host);
  if (!options.allowedHosts.includes(parsed.host) || (parsed.protocol !== 'https:' && !loopbackTest)) return { ok: false, error: `not the platform's file host (${parsed.host})` };
  try {
    const res = await fetch(parsed, { redirect: 'error', ...(options.headers ? { headers: options.headers } : {}), ...(options.signal ? { signal: options.signal } : {}) });
    if (!res.ok || !res.body) return { ok: false, error: `the file host answered ${res.status}` };
    const chunks: Buffer[] = [];
    let size = 0;
    for await (const chunk of res.body as unknown as AsyncIterable<Uint8Array>) {
      size += chunk.length;
      if (size > options.maxBytes) return { ok: false, error: `larger than ${options.maxBytes} bytes` };
      chunks.push(Buffer.from(chunk));
    }
    return { ok: true, data: Buffer.concat(chunks) };
  } catch (err) {
    return { ok: false, error: (err as Error).message };
  }
}

import { guardedFetch } from '../../src/net/fetch.js';

/**
 * Fetches a file a person posted from the platform's own file host, and nowhere else: the URL
 * comes in the platform's event, but a message's attachment list is data a client could shape,
 * so an address outside `allowedHosts` (or not https, except the loopback test host) is
 * refused, redirects are not followed, and reading stops at `maxBytes`. The request goes
 * through the SSRF guard pinned to that host (its DNS answers checked, the connection pinned
 * to them), and `headers` (Slack's bot token) are sent to that origin only.
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
  if (!options.allowedHosts.includes(parsed.host) || (parsed.protocol !== 'https:' && !loopbackTest) || parsed.username || parsed.password) {
    return { ok: false, error: `not the platform's file host (${parsed.host})` };
  }
  try {
    const got = await guardedFetch(parsed.href, {
      surface: 'service',
      policy: { hostnameAllowlist: [parsed.hostname], ...(loopbackTest ? { allowPrivateNetwork: true } : {}) },
      maxRedirects: 0,
      maxResponseBytes: options.maxBytes,
      headers: { accept: '*/*' },
      ...(options.headers ? { originHeaders: options.headers } : {}),
      ...(options.signal ? { signal: options.signal } : {}),
    });
    if (!got.ok) return { ok: false, error: got.error };
    if (got.status < 200 || got.status > 299) return { ok: false, error: `the file host answered ${got.status}` };
    if (got.truncated) return { ok: false, error: `larger than ${options.maxBytes} bytes` };
    return { ok: true, data: got.body };
  } catch (err) {
    return { ok: false, error: (err as Error).message };
  }
}

import type { PluginTool, PluginToolContext, WardenPluginApi } from 'warden/plugin';

/**
 * incidents: a team tool over an incident tracker's HTTP API. `incident_list` and
 * `incident_create` join the coding and messaging profiles; `incident_update` is optional (an
 * allowlist must name it, the plugin id or group:plugins). Each turn builds its tools with the
 * turn's context, so an incident opened from chat records who opened it and where — taken from
 * Warden's context, never from the model's arguments. `/incident` lists the open incidents.
 *
 * The base URL and token come from the plugin's config (the token best as `${INCIDENTS_TOKEN}`);
 * the token is sent only to the base URL and never appears in a result.
 */

export interface IncidentsConfig {
  baseUrl: string;
  token: string;
  timeoutMs: number;
}

interface Incident {
  id: string;
  title: string;
  severity: string;
  status: string;
  [key: string]: unknown;
}

export class TrackerError extends Error {}

/** The base URL without trailing `/`s; a loop, since `/\/+$/` is quadratic on a long run of `/`. */
function withoutTrailingSlashes(url: string): string {
  let end = url.length;
  while (end > 0 && url[end - 1] === '/') end--;
  return url.slice(0, end);
}

export function client(config: IncidentsConfig) {
  const base = withoutTrailingSlashes(config.baseUrl);
  return async function call<T>(method: 'GET' | 'POST' | 'PATCH', path: string, body?: unknown, signal?: AbortSignal): Promise<T> {
    const timeout = AbortSignal.timeout(config.timeoutMs);
    const response = await fetch(`${base}${path}`, {
      method,
      headers: { authorization: `Bearer ${config.token}`, accept: 'application/json', ...(body !== undefined ? { 'content-type': 'application/json' } : {}) },
      ...(body !== undefined ? { body: JSON.stringify(body) } : {}),
      redirect: 'error',
      signal: signal ? AbortSignal.any([signal, timeout]) : timeout,
    });
    const text = await response.text();
    if (!response.ok) throw new TrackerError(`the incident tracker answered ${response.status}${text ? `: ${text.slice(0, 300)}` : ''}`);
    return (text ? JSON.parse(text) : undefined) as T;
  };
}

const result = (value: unknown) => ({ content: [{ type: 'text' as const, text: JSON.stringify(value, null, 2) }], details: value });

export function incidentTools(config: IncidentsConfig, ctx: PluginToolContext): PluginTool[] {
  const call = client(config);
  const where = ctx.channelName ? `#${ctx.channelName}` : ctx.chat === 'dm' ? 'a DM' : (ctx.channelId ?? ctx.provider);
  return [
    {
      name: 'incident_list',
      description: 'List incidents in the team tracker (open ones unless status says otherwise).',
      parameters: { type: 'object', properties: { status: { type: 'string', enum: ['open', 'resolved', 'all'] } }, additionalProperties: false },
      async execute(_id, params: { status?: string }, signal) {
        const incidents = await call<Incident[]>('GET', `/incidents?status=${encodeURIComponent(params.status ?? 'open')}`, undefined, signal);
        return result(incidents);
      },
    },
    {
      name: 'incident_create',
      description: 'Open an incident in the team tracker.',
      parameters: {
        type: 'object',
        properties: {
          title: { type: 'string', minLength: 3, maxLength: 200 },
          severity: { type: 'string', enum: ['sev1', 'sev2', 'sev3', 'sev4'] },
          summary: { type: 'string', maxLength: 4000 },
        },
        required: ['title', 'severity'],
        additionalProperties: false,
      },
      async execute(_id, params: { title: string; severity: string; summary?: string }, signal) {
        const created = await call<Incident>(
          'POST',
          '/incidents',
          { title: params.title, severity: params.severity, summary: params.summary ?? '', reportedBy: `${ctx.provider}:${ctx.senderId ?? 'unknown'}`, reportedIn: where },
          signal,
        );
        return result(created);
      },
    },
    {
      name: 'incident_update',
      description: 'Change an incident\'s status or add a note.',
      parameters: {
        type: 'object',
        properties: { id: { type: 'string', pattern: '^[A-Za-z0-9_-]{1,64}$' }, status: { type: 'string', enum: ['investigating', 'mitigated', 'resolved'] }, note: { type: 'string', maxLength: 4000 } },
        required: ['id'],
        additionalProperties: false,
      },
      async execute(_id, params: { id: string; status?: string; note?: string }, signal) {
        const updated = await call<Incident>('PATCH', `/incidents/${encodeURIComponent(params.id)}`, { status: params.status, note: params.note, by: `${ctx.provider}:${ctx.senderId ?? 'unknown'}` }, signal);
        return result(updated);
      },
    },
  ];
}

/**
 * The listed JSON without the untrusted-data wrapper: an opening `<untrusted…>` at the start and a
 * closing `</untrusted…>` at the end, as `/^<untrusted[^>]*>|<\/untrusted[^>]*>$/g` would take
 * them. Scanned with indexOf: the text is the tracker's, and that pattern retries every
 * `</untrusted` of a long text to its end.
 */
export function withoutUntrustedTags(text: string): string {
  let start = 0;
  if (text.startsWith('<untrusted')) {
    const close = text.indexOf('>', '<untrusted'.length);
    if (close >= 0) start = close + 1;
  }
  let end = text.length;
  if (text.endsWith('>')) {
    // The closing tag holds no `>` but its last one: it starts after the one before.
    const before = text.lastIndexOf('>', text.length - 2);
    const open = text.indexOf('</untrusted', Math.max(before + 1, start));
    if (open >= 0 && open + '</untrusted'.length < text.length) end = open;
  }
  return text.slice(start, end);
}

export function register(api: WardenPluginApi): void {
  const config = api.config as unknown as IncidentsConfig;
  api.registerTool((ctx) => incidentTools(config, ctx));
  api.registerCommand({
    name: 'incident',
    description: 'the open incidents in the tracker',
    async handler(ctx) {
      // Through the conversation's surface and the call chain: where incident_list is denied, so is this.
      const listed = await ctx.tools.call('incident_list', { status: 'open' });
      if (listed.isError) return `Cannot list incidents here: ${listed.content.map((c) => (c.type === 'text' ? c.text : '')).join(' ')}`;
      const text = listed.content.map((c) => (c.type === 'text' ? c.text : '')).join('');
      let incidents: Incident[] = [];
      try {
        incidents = JSON.parse(withoutUntrustedTags(text)) as Incident[];
      } catch {
        return text;
      }
      if (incidents.length === 0) return 'No open incidents.';
      return ['Open incidents:', ...incidents.map((i) => `• ${i.id} [${i.severity}] ${i.title} — ${i.status}`)].join('\n');
    },
  });
}

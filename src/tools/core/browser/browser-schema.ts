/** Reference D7 names: actions, and the kinds of `act`. */
export const BROWSER_ACTIONS = ['status', 'start', 'stop', 'profiles', 'tabs', 'open', 'focus', 'close', 'snapshot', 'screenshot', 'navigate', 'back', 'act'] as const;
export const ACT_KINDS = ['click', 'type', 'press', 'hover', 'select', 'wait'] as const;

export interface BrowserArgs {
  action: (typeof BROWSER_ACTIONS)[number];
  profile?: string;
  url?: string;
  targetUrl?: string;
  targetId?: string;
  kind?: (typeof ACT_KINDS)[number];
  ref?: string;
  text?: string;
  key?: string;
  values?: string[];
  submit?: boolean;
  doubleClick?: boolean;
  interactive?: boolean;
  compact?: boolean;
  depth?: number;
  selector?: string;
  frame?: string;
  maxChars?: number;
  mode?: 'efficient';
  fullPage?: boolean;
  type?: 'png' | 'jpeg';
  timeMs?: number;
  timeoutMs?: number;
}

export const browserParameters = {
  type: 'object',
  additionalProperties: false,
  required: ['action'],
  properties: {
    action: {
      type: 'string',
      enum: BROWSER_ACTIONS,
      description:
        'open (new tab) / navigate (current tab) to a url; snapshot to read the page as an accessibility tree with refs (e1, e2, …); act on an element by ref; screenshot; back; tabs, focus, close; status, profiles, start, stop.',
    },
    profile: { type: 'string', description: 'Browser profile (its own Chromium, cookies and storage). Default: the configured default profile.' },
    url: { type: 'string', description: 'open/navigate: the http(s) URL. Private, loopback and cloud-metadata addresses are refused.' },
    targetUrl: { type: 'string', description: 'Same as url.' },
    targetId: { type: 'string', description: 'A tab id from "tabs" (t1, t2, …). Default: the current tab.' },
    kind: { type: 'string', enum: ACT_KINDS, description: 'act: click, type (fills text), press (a key), hover, select (options), wait (time or text).' },
    ref: { type: 'string', description: 'act/screenshot: an element ref from the last snapshot of this tab, like e12.' },
    text: { type: 'string', description: 'act type: the text to fill in; act wait: text to wait for.' },
    key: { type: 'string', description: 'act press: a key such as Enter, Tab, ArrowDown or Control+A.' },
    values: { type: 'array', items: { type: 'string' }, description: 'act select: option labels (or values) to select.' },
    submit: { type: 'boolean', description: 'act type: press Enter afterwards.' },
    doubleClick: { type: 'boolean', description: 'act click: double-click.' },
    interactive: { type: 'boolean', description: 'snapshot: only interactive elements, one per line (smallest).' },
    compact: { type: 'boolean', description: 'snapshot: drop unnamed structure.' },
    depth: { type: 'integer', minimum: 0, maximum: 100, description: 'snapshot: deepest level kept (0 = top level).' },
    selector: { type: 'string', description: 'snapshot: CSS selector of the part of the page to read.' },
    frame: { type: 'string', description: 'snapshot: CSS selector of an iframe to read instead of the page.' },
    maxChars: { type: 'integer', minimum: 500, maximum: 80_000, description: 'snapshot: most characters returned (default 20000).' },
    mode: { type: 'string', enum: ['efficient'], description: 'snapshot: efficient = interactive, compact, depth 6 and 8000 characters unless given.' },
    fullPage: { type: 'boolean', description: 'screenshot: the whole scrollable page, not only the viewport.' },
    type: { type: 'string', enum: ['png', 'jpeg'], description: 'screenshot: image format (default png).' },
    timeMs: { type: 'integer', minimum: 0, maximum: 30_000, description: 'act wait: milliseconds to wait.' },
    timeoutMs: { type: 'integer', minimum: 100, maximum: 60_000, description: 'act/screenshot: give up after this long (default 10000).' },
  },
} as const;

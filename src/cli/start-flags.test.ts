import { describe, expect, it } from 'vitest';
import { parseArgs } from './args.js';
import { portFlags } from './start.js';

describe('warden start --port / --ops-port', () => {
  it.each([
    [['start'], { ok: true, env: {} }],
    [['start', '--port', '3001'], { ok: true, env: { WARDEN_PORT: '3001' } }],
    [['start', '--ops-port=3005', '--port', '0'], { ok: true, env: { WARDEN_PORT: '0', WARDEN_OPS_PORT: '3005' } }],
    [['start', '--port', 'http'], { ok: false, message: 'warden start: --port needs a port number from 0 to 65535 (channels.web.port), got "http"' }],
    [['start', '--ops-port', '70000'], { ok: false, message: 'warden start: --ops-port needs a port number from 0 to 65535 (ops.port), got "70000"' }],
    [['start', '--port'], { ok: false, message: 'warden start: --port needs a port number from 0 to 65535 (channels.web.port)' }],
  ])('%j', (argv, want) => {
    expect(portFlags(parseArgs(argv))).toEqual(want);
  });
});

import { describe, expect, it, vi } from 'vitest';
import { parseConfig } from '../config/index.js';
import type { Logger } from '../log/log.js';
import { McpConnection } from './connection.js';
import { serverSettings } from './settings.js';

const settingsOf = (server: Record<string, unknown>) => {
  const r = parseConfig({ mcp: { servers: { api: server } } });
  if (!r.ok) throw r.error;
  return serverSettings(r.value.config, '/srv/warden')[0]!;
};
const quietLog = () => ({ debug: vi.fn(), info: vi.fn(), warn: vi.fn(), error: vi.fn() }) as unknown as Logger;

describe('an MCP connection attempt', () => {
  it('that fails before its own handling (opening the transport throws) is a failure like any other: reported and retried', async () => {
    let opened = 0;
    const connection = new McpConnection(settingsOf({ url: 'http://127.0.0.1:9/mcp' }), {
      log: quietLog(),
      ownListeners: () => {
        opened++;
        throw new Error('listener registry unavailable');
      },
      onChange: () => {},
      backoff: { baseMs: 10, maxMs: 10 },
    });
    connection.start();
    await connection.settled;
    expect(connection.status()).toMatchObject({ state: 'failed', failures: 1, lastError: expect.stringMatching(/listener registry unavailable/) });
    await vi.waitFor(() => expect(opened).toBeGreaterThanOrEqual(2), { timeout: 5_000 });
    await connection.stop();
  });
});

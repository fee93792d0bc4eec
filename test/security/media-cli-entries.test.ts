import { existsSync, mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { pino } from 'pino';
import { afterEach, describe, expect, it } from 'vitest';
import { parseConfig } from '../../src/config/index.js';
import { understandAttachments, type Attachment } from '../../src/media-understanding/index.js';
import { createExecTool } from '../../src/tools/core/exec/exec.js';
import { TtlCache } from '../../src/util/ttl-cache.js';

/**
 * Attack class: code execution through a media-understanding cli entry. The sender controls
 * the attachment's bytes, name and type; none of it may become shell syntax, leave the
 * workspace, or run a command the exec policy does not allow. Real bubblewrap, as root.
 */
const dirs: string[] = [];
afterEach(() => {
  for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
  rmSync('/tmp/warden-media-pwned', { force: true });
});

async function understand(entry: Record<string, unknown>, attachment: Attachment, exec: Record<string, unknown>) {
  const r = parseConfig({ tools: { exec: { host: 'sandbox', ...exec }, media: { models: [{ type: 'cli', capabilities: ['audio'], ...entry }] } } });
  if (!r.ok) throw r.error;
  const workspace = mkdtempSync(path.join(tmpdir(), 'warden-media-sec-'));
  dirs.push(workspace);
  const [outcome] = await understandAttachments([attachment], {
    config: r.value.config,
    turn: { agentId: 'main', provider: 'discord', chat: 'channel', channelId: 'c', senderId: 'attacker', senderIsOwner: false, spawnDepth: 0 },
    sessionKey: 's',
    workspaceDir: workspace,
    exec: createExecTool({ config: r.value.config, hasBwrap: true }) as never,
    cache: new TtlCache<string>(),
    log: pino({ level: 'silent' }),
  });
  return { outcome, workspace };
}

const audio = (name: string, contentType = 'audio/ogg'): Attachment => ({ name, contentType, data: Buffer.concat([Buffer.from('OggS'), Buffer.alloc(2000, 0x41)]) });

describe('cli entries as an attacker would try them', () => {
  it.each([
    "x$(touch /tmp/warden-media-pwned).ogg",
    'x`touch /tmp/warden-media-pwned`.ogg',
    "x';touch /tmp/warden-media-pwned;'.ogg",
    '../../../../etc/passwd',
    'a\nb.ogg',
  ])('the file name %j is not shell syntax and does not choose the path', async (name) => {
    const { outcome } = await understand({ command: 'head', args: ['-c', '8', '{{AttachmentPath}}'] }, audio(name), { allowlist: [{ pattern: '/usr/bin/head' }] });
    expect(outcome).toMatchObject({ status: 'understood', text: 'OggSAAAA' });
    expect(existsSync('/tmp/warden-media-pwned')).toBe(false);
  });

  it.each(['audio/ogg; x=$(touch /tmp/warden-media-pwned)', "audio/ogg'$(id)'"])('the content type %j is one word too', async (contentType) => {
    const { outcome } = await understand({ command: 'echo', args: ['{{AttachmentContentType}}'] }, audio('a.ogg', contentType), { allowlist: [{ pattern: '/usr/bin/echo' }] });
    expect(outcome).toMatchObject({ status: 'understood' });
    expect(existsSync('/tmp/warden-media-pwned')).toBe(false);
  });

  it('a command the allowlist does not cover does not run without an approver', async () => {
    const { outcome } = await understand({ command: 'touch', args: ['/tmp/warden-media-pwned'] }, audio('a.ogg'), {});
    expect(outcome).toMatchObject({ status: 'failed' });
    expect(existsSync('/tmp/warden-media-pwned')).toBe(false);
  });

  it('an allowlisted command still runs sandboxed: it cannot write outside the workspace', async () => {
    const { outcome } = await understand({ command: 'touch', args: ['/tmp/warden-media-pwned'] }, audio('a.ogg'), { allowlist: [{ pattern: '/usr/bin/touch' }] });
    expect(outcome?.status).not.toBe('understood');
    expect(existsSync('/tmp/warden-media-pwned')).toBe(false);
  });

  it('the staged copy is removed, even when the command fails', async () => {
    const { workspace } = await understand({ command: 'false', args: ['{{AttachmentPath}}'] }, audio('a.ogg'), { allowlist: [{ pattern: '/usr/bin/false' }] });
    const staged = path.join(workspace, '.warden-media');
    expect(existsSync(staged) ? readdirSync(staged) : []).toEqual([]);
  });
});

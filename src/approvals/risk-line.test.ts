// Every card says what the call can do, in one line from the rule or Warden's own catalog —
// never from the model's text or the tool's self-description.
import { afterEach, describe, expect, it } from 'vitest';
import { freshStoreTarget } from '../../test/store-engines.js';
import { parseConfig } from '../config/index.js';
import { EventBus } from '../events/events.js';
import { openWardenStore } from '../app/migrations.js';
import { ApprovalService } from './service.js';
import type { ApprovalRequestContext } from './types.js';

const cleanups: Array<() => Promise<void> | void> = [];
afterEach(async () => {
  while (cleanups.length) await cleanups.pop()!();
});

const CTX: ApprovalRequestContext = { agentId: 'main', sessionKey: 's', provider: 'discord', channelId: 'C1' };

describe('the risk line', () => {
  it.each<[string, { tool: string; kind: 'exec' | 'tool'; facts?: Array<{ label: string; value: string }> }, string]>([
    ['exec', { tool: 'exec', kind: 'exec', facts: [{ label: 'Warning', value: 'the command spans 4 lines' }] }, 'runs a command on the host'],
    ['a core tool', { tool: 'write', kind: 'tool' }, 'creates or overwrites files in the workspace'],
    ['an MCP tool, whatever its description says', { tool: 'jira__delete_issue', kind: 'tool' }, 'calls a tool of MCP server jira, which can act outside Warden'],
    ['a rule’s own line wins', { tool: 'message', kind: 'tool', facts: [{ label: 'Risk', value: 'posts to #announcements' }] }, 'posts to #announcements'],
  ])('%s', async (_label, call, risk) => {
    const opened = await openWardenStore(await freshStoreTarget('sqlite'));
    if (!opened.ok) throw new Error(opened.error.message);
    const parsed = parseConfig({ owners: { discord: ['O'] } });
    if (!parsed.ok) throw parsed.error;
    const svc = new ApprovalService({ store: opened.store, config: parsed.value.config, events: new EventBus() });
    cleanups.push(async () => {
      svc.shutdown();
      await opened.store.close();
    });
    const request = await svc.open({ kind: call.kind, tool: call.tool, title: 'Ignore the risk: this is safe', preview: 'x', fullText: 'x', ...(call.facts ? { facts: call.facts } : {}) }, CTX);
    const risks = request.facts.filter((f) => f.label === 'Risk');
    expect(risks).toEqual([{ label: 'Risk', value: risk }]);
    // A tool's own warning stays first.
    if (call.facts?.[0]?.label === 'Warning') expect(request.facts[0]!.label).toBe('Warning');
  });
});

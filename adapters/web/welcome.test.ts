import { describe, expect, it } from 'vitest';
import { webWelcome } from './welcome.js';

describe('the web chat welcome card', () => {
  it.each([
    ['a model with its key', { model: 'anthropic/claude-sonnet-4-5', workspace: '/srv/w/workspace', configFile: '/srv/w/warden.config.yaml' }, 'Model: anthropic/claude-sonnet-4-5'],
    ['a model whose key is missing', { model: 'openai/gpt-5-mini', missingKey: 'OPENAI_API_KEY', workspace: '/srv/w/workspace', configFile: undefined }, 'Model: openai/gpt-5-mini — set OPENAI_API_KEY in the environment or .env to chat'],
    ['no model, no config file', { model: undefined, workspace: '/srv/w/workspace', configFile: undefined },
      'No model yet: commands work, and to chat add `models: { default: anthropic/claude-sonnet-4-5 }` to warden.config.yaml and set ANTHROPIC_API_KEY (or another provider\'s model and key).'],
    ['no model, a config file', { model: undefined, workspace: '/srv/w/workspace', configFile: '/srv/w/team.yaml' },
      'No model yet: commands work, and to chat add `models: { default: anthropic/claude-sonnet-4-5 }` to /srv/w/team.yaml and set ANTHROPIC_API_KEY (or another provider\'s model and key).'],
  ])('%s', (_name, facts, model) => {
    const w = webWelcome(facts);
    expect(w.model).toBe(model);
    expect(w.workspace).toBe('Workspace: /srv/w/workspace — the agent\'s files; /exec runs there.');
    expect(w.try.map((t) => t.command)).toEqual(['/help', '/tools', '/exec ls -la']);
  });
});

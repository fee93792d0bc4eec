import type { WardenConfig } from './index.js';

/** Which chat adapters a config starts: every platform with a token; the web chat when there is none. */
export function plannedAdapters(config: WardenConfig): Array<'discord' | 'slack' | 'web'> {
  const planned: Array<'discord' | 'slack' | 'web'> = [];
  if (config.channels.discord?.token) planned.push('discord');
  if (config.channels.slack?.botToken) planned.push('slack');
  if (planned.length === 0) planned.push('web');
  return planned;
}

/**
 * The approval card for a sandboxed command's connection to a name not on
 * `tools.exec.sandbox.network.allow` (ask: on-miss). Its own "Risk" line says what this
 * decision risks — data leaving this machine for that host — so the exec catalog's line
 * ("runs a command on the host") is not used: the command is already running, in the sandbox,
 * and the card decides only where it may send.
 */
export interface NetworkCard {
  title: string;
  preview: string;
  facts: Array<{ label: string; value: string }>;
  /** The allowlist entry "allow always" adds: a bare name for 80/443, else `host:port` (`[v6]:port`). */
  entry: string;
}

const clip = (text: string, max: number) => (text.length > max ? `${text.slice(0, max)}…` : text);

export function networkCard(host: string, port: number, command: string, canAddToAllowlist: boolean): NetworkCard {
  const entry = port === 80 || port === 443 ? host : host.includes(':') ? `[${host}]:${port}` : `${host}:${port}`;
  const target = host.includes(':') ? `[${host}]:${port}` : `${host}:${port}`;
  // One line per command in the risk (cards show facts on one line; the full text is above).
  const oneLine = command.replace(/\s+/g, ' ').trim();
  return {
    title: `network: ${host}:${port} for \`${clip(command, 200)}\``,
    preview: `${host}:${port}`,
    entry,
    facts: [
      { label: 'Network', value: `the sandboxed command connects to ${target}, which is not on tools.exec.sandbox.network.allow` },
      { label: 'Allow once', value: `${target} for the rest of this command only` },
      {
        label: 'Allow always',
        value: canAddToAllowlist ? `adds "${entry}" to tools.exec.sandbox.network.allow (a config change through the control plane)` : 'not offered: no control plane to change the config',
      },
      { label: 'Deny', value: 'the connection fails with a 403 naming this decision' },
      // Host first: a card clips a long value at its end, and the destination is what must show.
      { label: 'Risk', value: `allowing lets data leave this machine for ${target}: \`${clip(oneLine, 50)}\` may send it anything it can read, the workspace included` },
    ],
  };
}

/** Config key paths as operators write them: `channels.discord.guilds.111.channels["#general"]`. */
export function keyPath(base: string, key: string): string {
  return /^[A-Za-z0-9_-]+$/.test(key) ? `${base}.${key}` : `${base}[${JSON.stringify(key)}]`;
}

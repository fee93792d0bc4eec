// Apart from the store itself (and its native SQLite binding): `warden start` judges `store.url`
// before anything else loads, so a malformed one is refused before the web chat's listener opens.
/** What `store.url` names: the embedded SQLite file, or a PostgreSQL server. */
export type StoreUrl = { engine: 'sqlite' } | { engine: 'postgres'; url: string; display: string } | { engine: 'invalid'; message: string };

export function parseStoreUrl(url: string | undefined): StoreUrl {
  if (url === undefined || url.trim() === '' || url.trim() === 'sqlite:') return { engine: 'sqlite' };
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    return { engine: 'invalid', message: 'store.url is not a URL (expected postgres://user:password@host:5432/database)' };
  }
  if (parsed.protocol !== 'postgres:' && parsed.protocol !== 'postgresql:') {
    return { engine: 'invalid', message: `store.url has the scheme ${parsed.protocol} (expected postgres:// or none for the embedded SQLite store)` };
  }
  const display = `postgres://${parsed.username ? `${decodeURIComponent(parsed.username)}@` : ''}${parsed.host}${parsed.pathname}`;
  return { engine: 'postgres', url, display };
}

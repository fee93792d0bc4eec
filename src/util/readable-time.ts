/**
 * A moment for people reading chat text: `Mon 7 Dec 2026, 09:00 UTC` rather than an ISO string.
 * Chat text has no viewer time zone (cards use the platforms' own time markup), so UTC is named.
 */
export function readableUtc(at: string | number | Date): string {
  const d = at instanceof Date ? at : new Date(at);
  if (Number.isNaN(d.getTime())) return String(at);
  const day = d.toLocaleDateString('en-GB', { weekday: 'short', day: 'numeric', month: 'short', year: 'numeric', timeZone: 'UTC' }).replace(',', '');
  const time = d.toLocaleTimeString('en-GB', { hour: '2-digit', minute: '2-digit', hour12: false, timeZone: 'UTC' });
  return `${day}, ${time} UTC`;
}

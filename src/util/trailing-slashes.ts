/**
 * `url` without its trailing `/`s: `https://api.example.com//` → `https://api.example.com`.
 * A loop rather than `/\/+$/`, which V8 retries from every `/` of a long run and so takes
 * quadratic time on a string of many `/` ending in another character.
 */
export function withoutTrailingSlashes(url: string): string {
  let end = url.length;
  while (end > 0 && url.charCodeAt(end - 1) === 0x2f) end--;
  return end === url.length ? url : url.slice(0, end);
}

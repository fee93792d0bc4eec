/**
 * ECMAScript WhiteSpace and LineTerminator: what `\s` matches and `String.prototype.trim`
 * removes. One list for the exec analysis (blank segments) and the regex translation (`\s`).
 */
export const ECMA_SPACE_RANGES: ReadonlyArray<readonly [number, number]> = [
  [0x09, 0x0d],
  [0x20, 0x20],
  [0xa0, 0xa0],
  [0x1680, 0x1680],
  [0x2000, 0x200a],
  [0x2028, 0x2029],
  [0x202f, 0x202f],
  [0x205f, 0x205f],
  [0x3000, 0x3000],
  [0xfeff, 0xfeff],
];

/** Whether the UTF-16 code unit is in ECMA_SPACE_RANGES (ASCII answered without the list). */
export function isEcmaSpace(code: number): boolean {
  if (code < 128) return code === 32 || (code >= 9 && code <= 13);
  for (const [from, to] of ECMA_SPACE_RANGES) if (code >= from && code <= to) return true;
  return false;
}

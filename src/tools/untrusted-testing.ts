/**
 * For tests that compare whole tool results: replaces each wrapper's nonce with nothing, so
 * `<untrusted-3f…9a source="file:a">\n…\n</untrusted-3f…9a>` reads `<untrusted source="file:a">\n…\n</untrusted>`.
 */
export function withoutNonces(text: string): string {
  return text.replace(/(<\/?untrusted)-[0-9a-f]{32}\b/g, '$1');
}

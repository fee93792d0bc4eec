/** Runs the layer check over `root` (a folder holding src/ and, optionally, adapters/). */
export function checkLayers(root: string): { ok: boolean; output: string };

import { setFlagsFromString } from 'node:v8';

// V8 doubles the young generation (from 1 MB per semi-space up to 16 MB) whenever a scavenge
// finds most of it still alive, which is what loading a few hundred modules at start-up looks
// like. The space is not given back at idle, so a bot that had only started held some 12 MB of
// young generation it no longer used. Holding the growth while Warden loads and starts keeps it
// at its first size; once released, V8 sizes it for the traffic that comes, as before. The
// growth factor is the one heap-size flag V8 reads at each scavenge: the semi-space maximum is
// fixed when the process starts (setting it here does nothing), and a respawn with the flag
// would cost a second start.
const V8_DEFAULT_GROWTH = 2;

let held = false;

/** Keeps the young generation at its current size until `releaseYoungGeneration` (idempotent). */
export function holdYoungGeneration(): void {
  if (held) return;
  held = true;
  setFlagsFromString('--semi-space-growth-factor=1');
}

/** V8's own sizing again (idempotent; nothing when not held). */
export function releaseYoungGeneration(): void {
  if (!held) return;
  held = false;
  setFlagsFromString(`--semi-space-growth-factor=${V8_DEFAULT_GROWTH}`);
}

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

// A command that answers and exits (`warden tools`, `warden doctor`, ...) is the opposite case:
// nothing is kept, and what it allocates while loading mostly survives (module code, the config
// schema), so each scavenge of a small young generation copies nearly all of it. From 1 MB
// V8 reaches its largest size in three doublings, each after a scavenge; growing eightfold gets
// there in one. Measured on `warden tools --json`: ten scavenges became five (issue 32).
const SHORT_COMMAND_GROWTH = 8;

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

/** For a command that answers and exits: the young generation grows to its largest size at once. */
export function growYoungGenerationFast(): void {
  if (held) return;
  setFlagsFromString(`--semi-space-growth-factor=${SHORT_COMMAND_GROWTH}`);
}

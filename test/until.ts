/**
 * Waits until `check` gives a truthy value and returns it, checking every `every` ms; throws
 * naming `what` after `ms`. Tests wait on conditions, never on fixed sleeps.
 */
export async function until<T>(check: () => T | undefined | false | Promise<T | undefined | false>, ms = 15_000, what = 'the condition', every = 10): Promise<T> {
  const end = Date.now() + ms;
  for (;;) {
    const value = await check();
    if (value) return value;
    if (Date.now() > end) throw new Error(`timed out after ${ms} ms waiting for ${what}`);
    await new Promise((r) => setTimeout(r, every));
  }
}

/**
 * How long after this instance forwarded a conversation's message to another instance it takes
 * that conversation to be still running there. A turn lasts about a model call, seconds; a
 * conversation whose messages keep reaching several instances (a load balancer) is forwarded
 * again well within it.
 */
export const FORWARDED_LATELY_MS = 5_000;

/** How many conversations are remembered at most (the oldest forward is forgotten first). */
const REMEMBERED_FORWARDS = 10_000;

/**
 * The conversations whose latest place taken here went to another instance, and when. A message
 * placed here for such a conversation would most likely go there too, so its place does not ask
 * for the conversation's lease and the turn's first reads with it (they would run for nothing in
 * the place's write); should the conversation have gone idle meanwhile, the message runs here
 * all the same and takes the lease in its turn, one round trip later. Only a cost is decided
 * here, never where or in which order a message runs: the place's write decides that.
 */
export class RecentForwards {
  private readonly at = new Map<string, number>();

  constructor(
    private readonly windowMs = FORWARDED_LATELY_MS,
    private readonly max = REMEMBERED_FORWARDS,
  ) {}

  /** Records where `key`'s latest place went: to another instance (`forwarded`) or here. */
  note(key: string, forwarded: boolean, now: number): void {
    this.at.delete(key);
    if (!forwarded) return;
    this.at.set(key, now);
    if (this.at.size > this.max) this.at.delete(this.at.keys().next().value as string);
  }

  /** Whether `key`'s latest place here went to another instance less than the window ago. */
  elsewhere(key: string, now: number): boolean {
    const at = this.at.get(key);
    if (at === undefined) return false;
    if (now - at < this.windowMs) return true;
    this.at.delete(key);
    return false;
  }

  get size(): number {
    return this.at.size;
  }
}

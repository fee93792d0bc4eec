/**
 * Remembers the last `capacity` ids, to process a redelivered event once. Old ids fall out in
 * arrival order, so memory stays bounded however long the process runs.
 */
export class RecentIds {
  private readonly ids = new Set<string>();

  constructor(private readonly capacity = 5_000) {}

  /** True the first time an id is seen; false for a repeat. */
  firstTime(id: string): boolean {
    if (this.ids.has(id)) return false;
    this.ids.add(id);
    if (this.ids.size > this.capacity) this.ids.delete(this.ids.values().next().value as string);
    return true;
  }
}

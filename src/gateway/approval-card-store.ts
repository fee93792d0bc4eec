/** Where one copy of an approval card was posted: a channel and the message in it (Slack: its ts). */
export interface CardRef {
  channelId: string;
  messageId: string;
}

/**
 * Remembers where each approval's cards are so an update can edit every copy. The router may
 * back it with its store: then a card posted before a restart is still edited to its final
 * state afterwards instead of being left clickable.
 */
export interface ApprovalCardStore {
  add(approvalId: string, ref: CardRef): void | Promise<void>;
  get(approvalId: string): CardRef[] | Promise<CardRef[]>;
}

/** The default store: in memory, for one process lifetime. */
export function memoryCardStore(): ApprovalCardStore {
  const cards = new Map<string, CardRef[]>();
  return {
    add(approvalId, ref) {
      const list = cards.get(approvalId) ?? [];
      if (!list.some((r) => r.channelId === ref.channelId && r.messageId === ref.messageId)) list.push(ref);
      cards.set(approvalId, list);
    },
    get: (approvalId) => cards.get(approvalId) ?? [],
  };
}

import type { EventBus } from '../events/events.js';
import type { ApprovalService } from './service.js';
import type { ApprovalRequest } from './types.js';

/**
 * The pending requests of one conversation (a session key), kept current from the event bus:
 * `onChange` gets the whole list at once and again whenever a request of that session is
 * opened or closed — decided, expired, withdrawn, interrupted, in this process or seen from
 * another. What a page's pending panel (or any live view) renders; `/approvals` reads the same
 * list once. Returns the function that stops watching.
 */
export function watchPending(
  approvals: Pick<ApprovalService, 'list'>,
  events: EventBus,
  sessionKey: string | undefined,
  onChange: (pending: ApprovalRequest[]) => void,
): () => void {
  const mine = (request: ApprovalRequest) => sessionKey === undefined || request.sessionKey === sessionKey;
  // Reads may finish out of order: only the latest one is reported, and none once stopped.
  let latest = 0;
  let stopped = false;
  const push = () => {
    const mine = ++latest;
    void approvals.list(sessionKey === undefined ? {} : { sessionKey }).then(
      (pending) => !stopped && mine === latest && onChange(pending),
      () => undefined,
    );
  };
  const offs = [
    events.on('approval.requested', ({ request }) => mine(request) && push()),
    events.on('approval.closed', ({ request }) => mine(request) && push()),
  ];
  push();
  return () => {
    stopped = true;
    for (const off of offs) off();
  };
}

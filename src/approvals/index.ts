/**
 * Approvals: a tool call that needs a human waits here until an approver decides.
 *
 * ```ts
 * const approvals = new ApprovalService({ store, config });   // one per process
 * approvals.registerRenderer(discordRenderer);                  // adapters: show + update cards
 * await approvals.recover();                                    // startup, after renderers
 * approvals.requester(turnContext)                              // → ToolCallContext.approvals
 * ```
 *
 * - `request(input, context, signal?)` creates, persists, renders and waits; it resolves with
 *   the outcome (`allow-once | allow-always | deny | expired | cancelled | interrupted`) and
 *   never rejects. Expiry: `approvals.exec.timeoutSec` (30 min) for exec, `approvals.hook.timeoutSec`
 *   (120 s, at most 600 s) for hook requests; `input.timeoutMs` overrides.
 * - `resolve(id, decision, {provider, userId})` is what the router calls on a click. It returns a
 *   value, never throws: `resolved {request, grant?}`, `already-resolved {outcome, decidedBy}`,
 *   `not-approver {reason}` (approvers: `approvals.approvers.<provider>`, else `owners.<provider>`),
 *   `not-found`, `decision-not-allowed {allowed}`. Of two concurrent resolves exactly one wins.
 * - `resolveAsOperator(id, decision, name)`: the local CLI operator.
 * - `list()` pending, `history()` closed, `get(id)`; `cancel(id, reason)`.
 * - `grants.list() | grants.revoke(id, by) | grants.match({agentId, tool, target, args})`:
 *   allow-always grants (agent, tool, `*`-glob patterns, optional expiry).
 * - `recover()`: past-expiry requests → expired (renderers update), requests a live process still
 *   waits for → re-armed, requests whose waiting call died → interrupted, written to the session
 *   transcript and emitted as `approval.interrupted` on the event bus for the router.
 * - `requester(context, { deferred })` adds `requestOrDefer`: it waits `approvals.waitSec` (5 s)
 *   and then answers `pending`; the call is stored as a deferred call (`deferred`) and run by
 *   whoever sees the decision (the gateway's DeferredCallRunner), after a restart too.
 *   `resumedRequester(id, fallback)` answers a resumed call's request with that decision.
 * - `watchPending(approvals, events, sessionKey, onChange)`: a conversation's pending requests,
 *   kept current from the bus (`approval.requested`, `approval.closed`).
 * - Every request, decision, refusal, expiry and grant change is an audit event.
 */
export { approverRefusal, approversFor, type ApproverConfig } from './approvers.js';
export { escapeGlob, globMatch } from './glob.js';
export { GrantStore, isLive, type RevokeResult } from './grants.js';
export { DeferredCallStore } from './deferred.js';
export { watchPending } from './pending-feed.js';
export { ApprovalService, MAX_HOOK_APPROVAL_TIMEOUT_MS, type ApprovalServiceOptions } from './service.js';
export * from './types.js';

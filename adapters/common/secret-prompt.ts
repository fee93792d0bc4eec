import type { ClickOrigin } from '../../src/gateway/types.js';
/**
 * The private prompt for a secret (the `secrets` tool): a button only the person asked can
 * use, which opens a platform modal with one masked-as-far-as-the-platform-allows text field.
 * The value goes from the modal's submission straight to `onSubmit` (the secret store); it is
 * never posted, logged or handed to the router as a message.
 */

/** Button custom_id (Discord) / action_id (Slack): `warden-secret:<request id>`. */
export const SECRET_BUTTON_PREFIX = 'warden-secret:';
/** Modal custom_id (Discord) / callback_id (Slack): `warden-secret-modal:<request id>`. */
export const SECRET_MODAL_PREFIX = 'warden-secret-modal:';
/** The text input's id inside the modal. */
export const SECRET_FIELD = 'secret_value';
/** Discord's and Slack's limit on one text input. */
export const SECRET_MAX_CHARS = 4000;

export interface SecretPromptSpec {
  /** The pending request's id (random; it names nothing). */
  id: string;
  /** The secret's name (`STRIPE_API_KEY`). */
  name: string;
  /** The model's stated reason, shown to the person. */
  reason: string;
  /** The platform user who asked: the only one the button opens for. */
  requesterId: string;
}

/** What an adapter asks the app about a click or a submission; `text` is shown privately to the clicker. */
export interface SecretPromptHandlers {
  /** A click on the button: may this user enter it now? */
  open(click: { id: string; userId: string; origin: ClickOrigin | undefined }): Promise<{ ok: true; name: string } | { ok: false; text: string }>;
  /** The modal's submission: stores the value (or refuses), and says what to tell the user. */
  submit(submission: { id: string; userId: string; origin: ClickOrigin | undefined; value: string }): Promise<{ ok: boolean; text: string }>;
}

export const secretButtonId = (id: string) => `${SECRET_BUTTON_PREFIX}${id}`;
export const secretModalId = (id: string) => `${SECRET_MODAL_PREFIX}${id}`;

/** The request id of a button or modal id of ours, else undefined. */
export function secretRequestId(customId: string, prefix: string): string | undefined {
  if (!customId.startsWith(prefix)) return undefined;
  const id = customId.slice(prefix.length);
  return /^[A-Za-z0-9-]{8,64}$/.test(id) ? id : undefined;
}

/** The prompt's words, the same on every platform. */
export function secretPromptText(spec: SecretPromptSpec): string {
  return `The assistant asks you for the secret ${spec.name}: ${spec.reason}\nEnter it in the private form (the button below). It goes to Warden's encrypted secret store; the assistant never sees it. Never paste a secret into the chat.`;
}

export const SECRET_NOT_YOURS_TEXT = 'Only the person the assistant asked can enter this secret.';

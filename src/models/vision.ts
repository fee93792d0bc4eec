import type { WardenConfig } from '../config/index.js';
import { parseModelRef } from './settings.js';

/**
 * Whether a model takes images as parts of a message. OpenClaw's model definition decides:
 * `models.providers.<provider>.models[]` with this model's id and an `input` list; "image" in
 * it means yes, a list without it means text only. A model the config does not list (the
 * hosted providers' models usually are not) is taken to read images, as before.
 */
export function modelReadsImages(config: Pick<WardenConfig, 'models'>, ref: string | undefined): boolean {
  if (ref === undefined) return false;
  const parsed = parseModelRef(ref);
  if (!parsed) return false;
  const listed = config.models.providers?.[parsed.provider]?.models?.find((m) => m.id === parsed.model);
  if (!listed?.input) return true;
  return listed.input.includes('image');
}

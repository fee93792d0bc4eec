import { isDeepStrictEqual } from 'node:util';
import type { WardenConfig } from '../config/index.js';
import { log } from '../log/log.js';

/** A listener of the control plane (the HTTP tools API, the node listener). */
export interface ControlService {
  start(): Promise<void>;
  stop(): Promise<void>;
}

export interface ControlServiceSpec<S extends ControlService = ControlService> {
  name: string;
  /** The block the service is built from; undefined = the service is off. */
  block: (config: WardenConfig) => unknown;
  create: (config: WardenConfig) => S;
}

/**
 * Runs each control-plane listener its config block asks for, and on a reload restarts only
 * those whose block changed.
 */
export class ControlListeners {
  private readonly running = new Map<string, { block: unknown; service: ControlService }>();

  constructor(private readonly specs: readonly ControlServiceSpec[]) {}

  get<S extends ControlService>(name: string): S | undefined {
    return this.running.get(name)?.service as S | undefined;
  }

  /** Brings the services in line with `config`; resolves with what failed (`name: why`). */
  async sync(config: WardenConfig, options: { throwOnError?: boolean } = {}): Promise<string[]> {
    const failed: string[] = [];
    for (const spec of this.specs) {
      const block = spec.block(config);
      const now = this.running.get(spec.name);
      if (now && isDeepStrictEqual(now.block, block)) continue;
      if (now) {
        await now.service.stop().catch((err: unknown) => log.warn({ err, service: spec.name }, 'control listener did not stop cleanly'));
        this.running.delete(spec.name);
      }
      if (block === undefined) continue;
      const service = spec.create(config);
      try {
        await service.start();
        this.running.set(spec.name, { block, service });
        if (now) log.info({ service: spec.name }, 'control listener restarted: its config block changed');
      } catch (err) {
        if (options.throwOnError) throw err;
        failed.push(`${spec.name}: ${(err as Error).message}`);
      }
    }
    return failed;
  }

  async stopAll(): Promise<void> {
    for (const [name, { service }] of this.running) await service.stop().catch((err: unknown) => log.warn({ err, service: name }, 'control listener did not stop cleanly'));
    this.running.clear();
  }
}

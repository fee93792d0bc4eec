// For tests: a turn loop whose turns end only when the test releases them (or they are aborted),
// echoing their input. It records what each turn was asked.
import type { AgentRuntime, TurnRequest } from '../agent/index.js';

export class HeldAgent implements AgentRuntime {
  readonly requests: TurnRequest[] = [];
  private readonly gates: Array<() => void> = [];
  async runTurn(request: TurnRequest) {
    this.requests.push(request);
    await new Promise<void>((resolve) => {
      this.gates.push(resolve);
      request.signal.addEventListener('abort', () => resolve(), { once: true });
    });
    const usage = { inputTokens: 0, outputTokens: 0 };
    if (request.signal.aborted) return { status: 'aborted' as const, reply: '', rounds: 1, usage };
    return { status: 'completed' as const, reply: `echo: ${request.input.text}`, rounds: 1, usage };
  }
  /** Ends the oldest turn still running. */
  releaseNext() {
    this.gates.shift()?.();
  }
  /** Ends every turn still running. */
  releaseAll() {
    for (const g of this.gates.splice(0)) g();
  }
}

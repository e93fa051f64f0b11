/**
 * A pause shared by the requests of a batch (CallOptions.gate): when one is answered 429, every request
 * through the gate waits until the time the service asked for (Retry-After), and the refused one is sent
 * again after it. Without it each worker retried on its own, all at once after the same wait, hitting
 * the limit again until a line ran out of retries although the service only asked to wait.
 * Bounded by the client's maxRetries: the batch gives up after that many pauses in a row let nothing
 * through, a request after PER_REQUEST_FACTOR times that many retries of its own. A Retry-After longer
 * than the client accepts gives up at once, as without a gate (transport.ts).
 */

const PER_REQUEST_FACTOR = 10;

export class RateGate {
  private resumeAt = 0;
  /** Counts the pauses; a request notes it when sent, to tell a new refusal from one of the same wave. */
  private pauses = 0;
  /** Pauses in a row after which no request got through. */
  private fruitless = 0;

  /** `now` in milliseconds, from the clock the client sleeps by. */
  constructor(private readonly now: () => number) {}

  /** How long a request must wait before it is sent (0: the gate is open). */
  delay(): number {
    return Math.max(0, this.resumeAt - this.now());
  }

  /** Taken as a request is sent: which pause it was sent after. */
  ticket(): number {
    return this.pauses;
  }

  /**
   * A request sent with `ticket` was refused (429), the service asking to wait `ms`: every request
   * through the gate waits until then. False when it is time to give up instead (see the top).
   * `retries` is how many times this request was already sent again through the gate.
   */
  pause(ticket: number, ms: number, retries: number, maxRetries: number): boolean {
    if (retries >= maxRetries * PER_REQUEST_FACTOR) return false;
    // The first refusal of a wave starts a pause; those of requests sent before it began join it.
    if (ticket === this.pauses) {
      if (this.fruitless >= maxRetries) return false;
      this.fruitless++;
      this.pauses++;
    }
    this.resumeAt = Math.max(this.resumeAt, this.now() + ms);
    return true;
  }

  /** A request got past the service's limit (any answer but 429): the count of fruitless pauses restarts. */
  passed(): void {
    this.fruitless = 0;
  }
}

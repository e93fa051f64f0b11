/**
 * A pause shared by a batch's requests: on a 429 all wait as the service asked (workers each retrying on
 * its own all hit the limit again at once). The batch gives up after maxRetries pauses in a row let nothing
 * through, a request after PER_REQUEST_FACTOR times that many retries of its own.
 */

const PER_REQUEST_FACTOR = 10;

export class RateGate {
  private resumeAt = 0;
  /** Counts the pauses; a request notes it when sent, to tell a new refusal from one of the same wave. */
  private pauses = 0;
  /** Pauses in a row after which no request got through. */
  private fruitless = 0;

  /** `stopped`: why no request may be sent any more (the batch's lock taken over), checked before each attempt. */
  constructor(
    private readonly now: () => number,
    private readonly stopped: () => Error | undefined = () => undefined,
  ) {}

  delay(): number {
    return Math.max(0, this.resumeAt - this.now());
  }

  /** Taken as a request is sent: which pause it was sent after. */
  ticket(): number {
    const stop = this.stopped();
    if (stop !== undefined) throw stop;
    return this.pauses;
  }

  /** A request sent with `ticket` was refused (429) for `ms`; false when it is time to give up instead. */
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

  /** Any answer but 429: the count of fruitless pauses restarts. */
  passed(): void {
    this.fruitless = 0;
  }
}

import { describe, expect, it } from 'vitest';
import { RateGate } from '../../src/api/rate-gate.js';

// The pause a batch's requests share (src/api/rate-gate.ts): one wave of 429s is one pause, a request
// that gets through starts the count again, and both bounds give up.

function gateAt(start = 1_000_000) {
  let now = start;
  return { gate: new RateGate(() => now), advance: (ms: number) => (now += ms) };
}

describe('RateGate', () => {
  it('one wave of refusals is one pause, until the latest Retry-After; every request waits for it', () => {
    const { gate, advance } = gateAt();
    expect(gate.delay()).toBe(0);
    const tickets = [gate.ticket(), gate.ticket(), gate.ticket()];
    expect(gate.pause(tickets[0] as number, 1000, 0, 3)).toBe(true);
    expect(gate.pause(tickets[1] as number, 2000, 0, 3)).toBe(true);
    expect(gate.pause(tickets[2] as number, 1000, 0, 3)).toBe(true);
    expect(gate.delay()).toBe(2000);
    advance(2000);
    expect(gate.delay()).toBe(0);
    // Three waves so far would be three pauses; this was one: two more fruitless ones are allowed.
    expect(gate.pause(gate.ticket(), 1000, 1, 3)).toBe(true);
    advance(1000);
    expect(gate.pause(gate.ticket(), 1000, 2, 3)).toBe(true);
    advance(1000);
    expect(gate.pause(gate.ticket(), 1000, 3, 3)).toBe(false);
  });

  it('a request that gets through restarts the count of fruitless pauses', () => {
    const { gate, advance } = gateAt();
    for (let wave = 0; wave < 10; wave++) {
      const refused = gate.ticket();
      expect(gate.pause(refused, 1000, 0, 3)).toBe(true);
      advance(1000);
      gate.passed();
    }
  });

  it('one request refused again and again gives up after 10 x maxRetries retries of its own', () => {
    const { gate } = gateAt();
    expect(gate.pause(gate.ticket(), 1000, 29, 3)).toBe(true);
    gate.passed();
    expect(gate.pause(gate.ticket(), 1000, 30, 3)).toBe(false);
  });

  it('once the batch must stop (its lock lost while it waited out a pause), no attempt gets a ticket', () => {
    const batch: { lost?: Error } = {};
    const gate = new RateGate(
      () => 0,
      () => batch.lost,
    );
    expect(gate.pause(gate.ticket(), 1000, 0, 3)).toBe(true);
    batch.lost = new Error('the lock was taken over by another process');
    expect(() => gate.ticket()).toThrow(batch.lost);
  });
});

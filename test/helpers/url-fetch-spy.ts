import { BlockList } from 'node:net';
import { expect } from 'vitest';
import { type ConnectRequest, type ConnectResponse, connectPinned } from '../../src/service/url-fetch/connect.js';
import { UrlFetchError } from '../../src/service/url-fetch/index.js';

/** Pieces the import fetcher's tests share: a connect step that spies, and the error a fetch fails with. */

// An independent notion of loopback for the spy (node's BlockList also matches ::ffff:127.x).
const loopback = new BlockList();
loopback.addSubnet('127.0.0.0', 8, 'ipv4');
loopback.addAddress('::1', 'ipv6');
const isLoopback = (address: string) => loopback.check(address, address.includes(':') ? 'ipv6' : 'ipv4');

/** Answers a connection itself (a canned response), or undefined to let the spy connect. */
export type Canned = (request: ConnectRequest) => ConnectResponse | undefined;

/**
 * A connect step that records every address it is asked for and opens sockets to loopback only: a
 * broken defence makes a test fail without ever reaching a real private host.
 */
export function spyConnect(canned?: Canned) {
  const addresses: string[] = [];
  const connect = async (request: ConnectRequest): Promise<ConnectResponse> => {
    addresses.push(request.address);
    const answer = canned?.(request);
    if (answer) return answer;
    if (!isLoopback(request.address)) throw new Error(`test spy: refusing to connect to ${request.address}`);
    return connectPinned(request);
  };
  return { connect, addresses };
}

/** The UrlFetchError `promise` rejects with; fails the test when it resolves or fails otherwise. */
export async function urlFetchError(promise: Promise<unknown>): Promise<UrlFetchError> {
  const error = await promise.then(
    () => undefined,
    (caught: unknown) => caught,
  );
  expect(error).toBeInstanceOf(UrlFetchError);
  return error as UrlFetchError;
}

import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo, Socket } from 'node:net';

/**
 * A scripted HTTP server on 127.0.0.1, port 0, for testing the client against faults the real service
 * never produces: each request is recorded, then answered by the test's handler (status codes,
 * Retry-After, HTML bodies, resets, stalls, huge bodies).
 */

export interface RecordedRequest {
  method: string;
  url: string;
  headers: IncomingMessage['headers'];
  body: string;
}

export type FaultHandler = (req: RecordedRequest, res: ServerResponse, index: number) => void | Promise<void>;

export interface FaultServer {
  baseUrl: string;
  requests: RecordedRequest[];
  /** Replaces the handler. */
  handle(handler: FaultHandler): void;
  close(): Promise<void>;
}

export async function startFaultServer(
  handler: FaultHandler = (_req, res) => json(res, 200, {}),
): Promise<FaultServer> {
  let current = handler;
  const requests: RecordedRequest[] = [];
  const sockets = new Set<Socket>();
  const server: Server = createServer(async (req, res) => {
    const chunks: Buffer[] = [];
    for await (const chunk of req) chunks.push(chunk as Buffer);
    const recorded = {
      method: req.method ?? '',
      url: req.url ?? '',
      headers: req.headers,
      body: Buffer.concat(chunks).toString('utf8'),
    };
    requests.push(recorded);
    try {
      await current(recorded, res, requests.length - 1);
    } catch (error) {
      if (!res.headersSent) json(res, 599, { detail: String(error) });
    }
  });
  server.on('connection', (socket) => {
    sockets.add(socket);
    socket.on('close', () => sockets.delete(socket));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    baseUrl: `http://127.0.0.1:${port}`,
    requests,
    handle: (next) => {
      current = next;
    },
    close: () =>
      new Promise((resolve) => {
        for (const socket of sockets) socket.destroy();
        server.close(() => resolve());
      }),
  };
}

export function json(res: ServerResponse, status: number, body: unknown, headers: Record<string, string> = {}): void {
  const text = JSON.stringify(body);
  res.writeHead(status, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(text), ...headers });
  res.end(text);
}

/** A key record as GET /v1/auth/api-keys/current answers it. */
export function currentKeyBody(overrides: Record<string, unknown> = {}): Record<string, unknown> {
  return {
    id: 'key_abc123',
    name: 'laptop',
    created_at: '2026-01-01T00:00:00Z',
    expires_at: null,
    key_prefix: 'fcs_abcdefgh',
    budget_usd: null,
    spent_usd: 0,
    allowed_face_ids: null,
    allowed_llm_models: null,
    scopes: ['v1:*'],
    plan: 'pro',
    ...overrides,
  };
}

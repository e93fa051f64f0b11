/**
 * undici's module files that proxy-agent.ts imports (typed there from undici's own types; undici is
 * loaded only when a proxy applies). Importing `undici` itself loads fetch, WebSocket, EventSource, the
 * cache and the mocks; the proxy's client needs only a ProxyAgent, a Pool, `request` and `connect`.
 * undici has no "exports" map, so these paths are public files. `faces get` through a proxy (callgrind):
 * 536 M instructions against 820 M importing `undici` on Node 20, 498 M against 865 M on Node 24.
 */
declare module 'undici/lib/*';

/**
 * Types for the undici modules the transport imports directly. Importing `undici` itself loads fetch,
 * WebSocket, EventSource, the cache and the mocks (~100 ms at every start); the client needs only a
 * Pool and `request` (proxies go through its own tunnel, proxy.ts). undici has no "exports" map, so these paths are public files.
 */
declare module 'undici/lib/dispatcher/pool.js' {
  import type { Pool } from 'undici';

  const PoolClass: typeof Pool;
  export default PoolClass;
}

declare module 'undici/lib/api/api-request.js' {
  import type { Dispatcher } from 'undici';

  /** Dispatcher.prototype.request, as a function to call with the dispatcher as `this`. */
  function request(this: Dispatcher, options: Dispatcher.RequestOptions): Promise<Dispatcher.ResponseData>;
  export default request;
}

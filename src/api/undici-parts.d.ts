/**
 * Types for the undici modules the transport imports directly. Importing `undici` itself loads fetch,
 * WebSocket, EventSource, the cache and the mocks (~100 ms at every start); the client needs only a
 * Pool and `request`, and a ProxyAgent with `connect` when a proxy applies (proxy-agent.ts). undici has
 * no "exports" map, so these paths are public files. Budget row: one API command, <= 5x `node -e 0`;
 * importing `undici` instead measured 7.59x against 4.95x on Node 20 and 5.75x against 4.00x on Node 24
 * (loaded machine, medians of 3 rounds; `npm run bench:tricks -- undici-deep-imports`).
 */
declare module 'undici/lib/dispatcher/pool.js' {
  import type { Pool } from 'undici';

  const PoolClass: typeof Pool;
  type PoolClass = Pool;
  namespace PoolClass {
    type Options = Pool.Options;
  }
  export default PoolClass;
}

declare module 'undici/lib/dispatcher/proxy-agent.js' {
  import type { ProxyAgent } from 'undici';

  const ProxyAgentClass: typeof ProxyAgent;
  export default ProxyAgentClass;
}

declare module 'undici/lib/api/api-request.js' {
  import type { Dispatcher } from 'undici';

  /** Dispatcher.prototype.request, as a function to call with the dispatcher as `this`. */
  function request(this: Dispatcher, options: Dispatcher.RequestOptions): Promise<Dispatcher.ResponseData>;
  export default request;
}

declare module 'undici/lib/api/api-connect.js' {
  import type { Dispatcher } from 'undici';

  /** Dispatcher.prototype.connect, as a function to call with the dispatcher as `this`. */
  function connect(this: Dispatcher, options: Dispatcher.ConnectOptions): Promise<Dispatcher.ConnectData>;
  export default connect;
}

/**
 * Types for the undici modules proxy-agent.ts imports directly (undici is loaded only when a proxy
 * applies). Importing `undici` itself loads fetch, WebSocket, EventSource, the cache and the mocks; the
 * proxy's client needs only a ProxyAgent, a Pool, `request` and `connect`. undici has no "exports" map,
 * so these paths are public files. `faces get` through a proxy (callgrind): 536 M instructions against
 * 820 M importing `undici` on Node 20, 498 M against 865 M on Node 24.
 */
declare module 'undici/lib/dispatcher/pool.js' {
  import type { Pool } from 'undici';

  const PoolClass: typeof Pool;
  type PoolClass = Pool;
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

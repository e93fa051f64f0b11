/**
 * undici's module files that proxy-agent.ts imports instead of its index (which loads fetch, WebSocket,
 * the cache and the mocks: docs/decisions.md). undici has no "exports" map, so these are public files.
 */
declare module 'undici/lib/*';

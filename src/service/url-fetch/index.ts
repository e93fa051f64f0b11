/**
 * The URL fetcher behind document import (POST /v1/compile/documents/import), with its SSRF defences.
 * See fetch.ts for the flow, url-policy.ts and address-policy.ts for what is refused.
 */
export { type AddressClass, type AddressVerdict, checkAddress, classifyAddress } from './address-policy.js';
export { type ConnectRequest, type ConnectResponse, type ConnectStep, connectPinned } from './connect.js';
export { UrlFetchError, type UrlFetchErrorCode } from './errors.js';
export {
  DEFAULT_MAX_BYTES,
  DEFAULT_MAX_REDIRECTS,
  DEFAULT_TIMEOUT_MS,
  type FetchImportOptions,
  type FetchImportResult,
  fetchImportUrl,
} from './fetch.js';
export type { LookupAddress, LookupFunction } from './url-policy.js';

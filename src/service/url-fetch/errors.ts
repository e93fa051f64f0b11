/**
 * The two ways an import fetch can fail. The service maps `url_not_allowed` to 422 (the URL or one it
 * redirected to points somewhere the service must not reach) and `fetch_failed` to its own error
 * (the target was allowed but did not give us a usable text document).
 */
export type UrlFetchErrorCode = 'url_not_allowed' | 'fetch_failed';

export class UrlFetchError extends Error {
  readonly code: UrlFetchErrorCode;

  constructor(code: UrlFetchErrorCode, message: string, options?: ErrorOptions) {
    super(message, options);
    this.name = 'UrlFetchError';
    this.code = code;
  }
}

export function notAllowed(message: string): UrlFetchError {
  return new UrlFetchError('url_not_allowed', message);
}

export function fetchFailed(message: string, cause?: unknown): UrlFetchError {
  return new UrlFetchError('fetch_failed', message, cause === undefined ? undefined : { cause });
}

import type { FieldError } from '../contract/common.js';

/** An error answer, sent as `{detail, code}` (an HTML page on the browser's routes) with its status and headers. */
export class HttpError extends Error {
  constructor(
    readonly status: number,
    readonly code: string,
    readonly detail: string | FieldError[],
    readonly headers: Record<string, string> = {},
  ) {
    super(typeof detail === 'string' ? detail : code);
    this.name = 'HttpError';
  }
}

export const notFound = (code: string, detail: string) => new HttpError(404, code, detail);
export const forbidden = (code: string, detail: string) => new HttpError(403, code, detail);
export const conflict = (code: string, detail: string) => new HttpError(409, code, detail);
export const paymentRequired = (code: string, detail: string) => new HttpError(402, code, detail);

/** 401 always carries the challenge, so clients know a bearer key is what is missing. */
export const unauthorized = (detail: string) =>
  new HttpError(401, 'not_authenticated', detail, { 'WWW-Authenticate': 'Bearer realm="facectl"' });

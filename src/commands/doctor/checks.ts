/** One line of `facectl doctor`; `fix` says what to do about it, null when there is nothing to do. */
export type Check = { name: string; status: 'ok' | 'warn' | 'fail'; detail: string; fix: string | null };

export const ok = (name: string, detail: string): Check => ({ name, status: 'ok', detail, fix: null });
export const warn = (name: string, detail: string, fix: string): Check => ({ name, status: 'warn', detail, fix });
export const fail = (name: string, detail: string, fix: string): Check => ({ name, status: 'fail', detail, fix });

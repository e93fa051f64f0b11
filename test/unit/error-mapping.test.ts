import { describe, expect, it } from 'vitest';
import { errorFromResponse } from '../../src/api/error-mapping.js';

describe('hints for a 404 follow the code the service gave, its own keys only', () => {
  const info = { method: 'GET', path: '/v1/faces/ada', baseUrl: 'http://127.0.0.1:8787' };

  it.each(['constructor', 'toString', '__proto__', 'hasOwnProperty'])(
    'a code named like an Object property (%s) gets the hint of the path, not a function printed as text',
    (code) => {
      const error = errorFromResponse(404, { code, detail: 'no such face' }, info);
      expect(error).toMatchObject({ status: 404, code, hint: 'check the face: faces are found by uid or alias' });
    },
  );

  it('a known code keeps its own hint', () => {
    const error = errorFromResponse(404, { code: 'thread_not_found', detail: 'gone' }, info);
    expect(error.hint).toBe('check the thread id (thr_...); `facectl threads create` prints it');
  });
});

describe('a 422 idempotency_mismatch says what to put back', () => {
  it('names the request sent before in another form (a breaker resumed a batch line rewritten since)', () => {
    const info = { method: 'POST', path: '/v1/compile/documents', baseUrl: 'http://127.0.0.1:8787' };
    const detail = 'this Idempotency-Key was used with a different request';
    const error = errorFromResponse(422, { code: 'idempotency_mismatch', detail }, info);
    expect(error).toMatchObject({ status: 422, code: 'idempotency_mismatch', message: detail });
    expect(error.hint).toContain('put it back as it was sent (a batch line: as it stood when the batch stopped)');
  });
});

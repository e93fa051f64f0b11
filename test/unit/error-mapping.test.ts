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

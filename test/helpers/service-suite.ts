import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, afterEach, beforeAll, beforeEach } from 'vitest';
import type { ServiceOptions } from '../../src/service/index.js';
import { call, createFace, expectContract, startTestService, type TestService, tempDir } from './service.js';

/**
 * The setup a test file repeats around the in-process service: start it before the file's tests (or
 * before each test, for tests that must not see another test's data), create the faces the tests
 * need, close it afterwards. Also a temporary directory for input files.
 */

export interface UseServiceOptions {
  /** A fresh service for every test instead of one for the file. */
  each?: boolean;
  /** Faces the pro user owns from the start (by alias). */
  faces?: string[];
}

/**
 * Registers the hooks and returns the running service. The value is a stand-in that forwards to the
 * service of the current test, so it can be taken at the top of the file; it is usable from the
 * first hook on. `options` may be a function, called at each start (a fresh clock per test).
 */
export function useService(
  options: ServiceOptions | (() => ServiceOptions) = {},
  { each = false, faces = [] }: UseServiceOptions = {},
): TestService {
  let current: TestService | undefined;
  const start = async () => {
    current = await startTestService(typeof options === 'function' ? options() : options);
    for (const alias of faces) await createFace(current, current.key('pro'), alias);
  };
  const stop = async () => {
    await current?.close();
    current = undefined;
  };
  if (each) {
    beforeEach(start);
    afterEach(stop);
  } else {
    beforeAll(start);
    afterAll(stop);
  }
  return new Proxy({} as TestService, {
    get(_target, name) {
      if (!current) throw new Error(`the test service is not running (reading ${String(name)})`);
      const value = Reflect.get(current, name, current);
      return typeof value === 'function' ? value.bind(current) : value;
    },
  });
}

export interface TempFiles {
  dir: string;
  /** Writes `content` to `name` in the directory and returns its path. */
  file(name: string, content: string | Buffer): string;
}

/** A temporary directory for the file's tests, removed after them. */
export function useTempFiles(prefix = 'facectl-test-'): TempFiles {
  const { dir, cleanup } = tempDir(prefix);
  afterAll(cleanup);
  return {
    dir,
    file(name, content) {
      const path = join(dir, name);
      writeFileSync(path, content);
      return path;
    },
  };
}

/** Creates a child API key of `parentKey` (201 checked against the contract) and returns its body. */
export async function createKey(service: { baseUrl: string }, parentKey: string, body: object = {}) {
  return expectContract('createApiKey', await call(service, 'createApiKey', { key: parentKey, body }), 201);
}

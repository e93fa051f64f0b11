import { afterAll, beforeAll, expect, test } from 'vitest';
import { type HeadlessBrowser, launchChromium } from '../helpers/chromium.js';
import { call, expectContract } from '../helpers/service.js';
import { useService } from '../helpers/service-suite.js';

/** The consent page in a real headless Chromium: Approve connects the account, Deny does not. */

let browser: HeadlessBrowser;
beforeAll(async () => {
  browser = await launchChromium();
});
afterAll(() => browser.close());
const svc = useService({}, { each: true });

async function openConsent() {
  const key = svc.key('connect');
  const res = await call(svc, 'authorizeOAuth', { key, params: { provider: 'example' } });
  const url = expectContract('authorizeOAuth', res, 200).authorize_url as string;
  const page = await browser.context.newPage();
  await page.goto(url);
  await expect.poll(() => page.title()).toBe('Connect example');
  expect(await page.locator('h1').textContent()).toBe('Connect to example');
  expect(await page.locator('#account').textContent()).toBe('connect@facectl.local');
  return page;
}

async function connection() {
  const res = await call(svc, 'listOAuthConnections', { key: svc.key('connect') });
  return expectContract('listOAuthConnections', res, 200)[0];
}

test('clicking Approve connects the account, with connected_at', async () => {
  const page = await openConsent();
  await Promise.all([
    page.waitForURL(/\/v1\/oauth\/example\/callback\?code=/),
    page.getByRole('button', { name: 'Approve' }).click(),
  ]);
  expect(await page.locator('h1').textContent()).toBe('Connected to example');
  await page.close();
  const entry = await connection();
  expect(entry.connected).toBe(true);
  expect(Number.isNaN(Date.parse(entry.connected_at))).toBe(false);
});

test('clicking Deny leaves the account not connected', async () => {
  const page = await openConsent();
  await Promise.all([page.waitForURL(/error=access_denied/), page.getByRole('button', { name: 'Deny' }).click()]);
  expect(await page.locator('h1').textContent()).toBe('Not connected to example');
  await page.close();
  expect(await connection()).toEqual({ provider: expect.any(String), connected: false });
});

test('reopening a consent page that was already decided shows it cannot be used; nothing connects', async () => {
  const page = await openConsent();
  await Promise.all([page.waitForURL(/error=access_denied/), page.getByRole('button', { name: 'Deny' }).click()]);
  await page.goBack();
  await page.reload();
  expect(await page.locator('h1').textContent()).toBe('This link cannot be used');
  await page.close();
  expect((await connection()).connected).toBe(false);
});

import { existsSync, mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, test } from '@jest/globals';
import express from 'express';
import type { Browser } from 'playwright-core';
import supertest from 'supertest';
import { contract } from '../../src/contract.ts';
import { DOCS_PAGE, serviceRoutes } from '../../src/http/serviceRoutes.ts';
import { startTestApp, type TestApp } from '../support/app.ts';
import { chromiumMissing, launchChromium } from '../support/browser.ts';
import { startClient, type TypedClient } from '../support/client.ts';

/*
 * The docs page in a real browser: Debian's Chromium (CI installs it) loads /docs from the running
 * service, every operation of the contract is on the page, and the page asked for nothing outside
 * the service. A screenshot is kept in test-results/. Without Chromium or a built page (`npm run
 * docs`, run by `npm ci`) the browser test is skipped and says why.
 */

const ARTIFACTS = join(process.cwd(), 'test-results');
const missing = [chromiumMissing, !existsSync(DOCS_PAGE) && 'docs/index.html (npm run docs)'].filter(Boolean);
if (missing.length > 0) console.warn(`Skipping the browser test of /docs: missing ${missing.join(' and ')}`);

test('without a built page, /docs is a 404 problem that says how to build it', async () => {
  const app = express().use(serviceRoutes(contract, { docsPage: join(ARTIFACTS, 'no-such-page.html') }));
  const response = await supertest(app).get('/docs');
  expect(response.status).toBe(404);
  expect(response.headers['content-type']).toMatch(/^application\/problem\+json/);
  expect(response.body.detail).toBe('The docs page has not been built: run `npm run docs`');
});

(missing.length === 0 ? describe : describe.skip)('/docs in Chromium', () => {
  let app: TestApp;
  let typed: TypedClient;
  let browser: Browser;

  beforeAll(async () => {
    app = await startTestApp();
    typed = await startClient(app);
    browser = await launchChromium();
  }, 60_000);
  afterAll(async () => {
    await browser?.close();
    await typed?.close();
    await app?.close();
  });

  test('lists every operation of the contract, with nothing loaded from outside the service', async () => {
    const page = await browser.newPage();
    const problems: string[] = [];
    const blocked: string[] = [];
    page.on('console', (message) => {
      if (message.type() !== 'error') return;
      // What the page's policy refused: never sent, but listed, so that a new one gets noticed.
      const refused = /^Loading the image '([^']+)' violates the following Content Security Policy/.exec(
        message.text(),
      );
      if (refused?.[1]) blocked.push(refused[1]);
      else problems.push(message.text());
    });
    page.on('pageerror', (error) => problems.push(error.message));
    const requested: string[] = [];
    const refused = new Set<string>();
    page.on('request', (request) => requested.push(request.url()));
    // A request the page's policy refuses is never sent; it is listed below all the same.
    page.on('requestfailed', (request) => {
      const reason = request.failure()?.errorText ?? '';
      if (reason === 'csp' || reason.includes('BLOCKED_BY_CSP')) refused.add(request.url());
    });
    const response = await page.goto(`${typed.baseUrl}/docs`, { waitUntil: 'load' });
    expect(response?.status()).toBe(200);
    expect(response?.headers()['content-security-policy']).toContain("default-src 'none'");

    type Described = { summary?: string; tags?: string[] };
    const described = contract.operations.map((operation) => {
      const item = (contract.document.paths as Record<string, Record<string, Described>>)[operation.path]?.[
        operation.method
      ];
      return { summary: item?.summary ?? operation.operationId, tag: item?.tags?.[0] ?? '' };
    });
    const summaries = described.map((operation) => operation.summary);
    // Redoc renders on the client; its sidebar lists a tag's operations once the tag is opened.
    const menuItem = page.locator('[data-component-name="Menu/MenuItem"]');
    await menuItem
      .first()
      .waitFor({ timeout: 30_000 })
      .catch((error: unknown) => {
        throw new Error(`the page did not render: ${problems.join(' | ') || String(error)}`);
      });
    const listed = new Set<string>();
    const tags = (contract.document.tags as { name: string }[]).map((tag) => tag.name);
    // Whether every one of `wanted` is in the sidebar, looking again every 250 ms for `rounds` turns:
    // Redoc renders a tag's operations some time after the click, later still on a loaded machine.
    const shown = async (wanted: string[], rounds: number): Promise<boolean> => {
      for (let round = 0; ; round += 1) {
        for (const label of await menuItem.allInnerTexts()) listed.add(label.split('\n')[0] ?? '');
        if (wanted.every((summary) => listed.has(summary))) return true;
        if (round + 1 >= rounds) return false;
        await page.waitForTimeout(250);
      }
    };
    for (const tag of tags) {
      const wanted = described
        .filter((operation) => operation.tag === tag)
        .map((operation) => operation.summary);
      if (await shown(wanted, 1)) continue;
      const group = menuItem.filter({ hasText: new RegExp(`^${tag}$`) }).first();
      await group.click();
      // A second click only if the first left the group closed (it may have been open already).
      if (!(await shown(wanted, 120))) {
        await group.click();
        await shown(wanted, 120);
      }
    }
    expect(summaries.filter((summary) => !listed.has(summary))).toEqual([]);
    expect(problems).toEqual([]);

    const outside = requested.filter(
      (url) => !url.startsWith(`${typed.baseUrl}/`) && !url.startsWith('data:') && !url.startsWith('blob:'),
    );
    expect(outside.filter((url) => !refused.has(url))).toEqual([]);
    // Redoc's "API docs by Redocly" attribution always points at its CDN logo; the policy stops it.
    const attribution = ['https://cdn.redoc.ly/redoc/logo-mini-full.svg'];
    expect([...new Set([...refused, ...blocked])].filter((url) => !attribution.includes(url))).toEqual([]);

    mkdirSync(ARTIFACTS, { recursive: true });
    await page.screenshot({ path: join(ARTIFACTS, 'docs.png') });
    expect(existsSync(join(ARTIFACTS, 'docs.png'))).toBe(true);
  }, 120_000);
});

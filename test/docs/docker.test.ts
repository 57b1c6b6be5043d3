import { readFileSync } from 'node:fs';
import { describe, expect, test } from '@jest/globals';
import { WORKER_MALLOC_ENVIRONMENT } from '../../src/supervisor.ts';

/*
 * The image is not built on the machines this project is developed on (no Docker engine; see
 * docs/operating/docker.md), so its hygiene is checked here, from the files: dependencies in a layer
 * of their own before the sources, pinned base and service images, and a runtime stage that runs
 * the compiled service and CLI (no src/, no tsx at run time).
 */

const read = (path: string) => readFileSync(new URL(`../../${path}`, import.meta.url), 'utf8');
const DOCKERFILE = read('Dockerfile');
const COMPOSE = read('compose.yaml');
/** The Dockerfile's instructions, continuation lines joined. */
const instructions = DOCKERFILE.replaceAll(/\\\n\s*/g, ' ')
  .split('\n')
  .filter((line) => /^[A-Z]+ /.test(line));
const stage = (name: string) => {
  const start = instructions.findIndex((line) => line.startsWith('FROM ') && line.endsWith(` AS ${name}`));
  const end = instructions.findIndex((line, index) => index > start && line.startsWith('FROM '));
  return instructions.slice(start, end < 0 ? undefined : end);
};

describe('the Docker image and compose file', () => {
  test('the base image is a pinned release (major.minor.patch) of Node.js 24 or later, the same for both stages', () => {
    const major = DOCKERFILE.match(/^ARG NODE_IMAGE=node:(\d+)\.\d+\.\d+-[a-z]+-slim$/m)?.[1];
    // From 24 on: the current LTS line, on which better-sqlite3 13.x's prebuilt binary loads.
    expect(Number(major)).toBeGreaterThanOrEqual(24);
    expect(instructions.filter((line) => line.startsWith('FROM '))).toEqual([
      `FROM $\{NODE_IMAGE} AS build`,
      `FROM $\{NODE_IMAGE} AS runtime`,
    ]);
  });

  test('the dependencies are installed before the sources are copied, from the lockfile alone', () => {
    const build = stage('build');
    const install = build.findIndex((line) => line.startsWith('RUN npm ci'));
    const sources = build.indexOf('COPY . .');
    expect(install).toBeGreaterThan(0);
    expect(sources).toBeGreaterThan(install);
    const copiedBefore = build.slice(0, install).filter((line) => line.startsWith('COPY '));
    expect(copiedBefore).toEqual(['COPY package.json package-lock.json ./', 'COPY packages ./packages']);
    // Install scripts run only as package.json's allowScripts permits, and nothing is compiled: no
    // compiler is installed (the driver on that Node is prebuilt).
    expect(build[install]).toContain('npm ci --ignore-scripts');
    expect(build[install]).toContain('npm rebuild --strict-allow-scripts');
    expect(build.filter((line) => /apt-get|sqlite:build/.test(line))).toEqual([]);
  });

  test('the runtime stage holds the compiled service and CLI, not the TypeScript sources', () => {
    const runtime = stage('runtime');
    const copies = runtime.filter((line) => line.startsWith('COPY '));
    expect(copies.some((line) => line.includes('/app/dist'))).toBe(true);
    expect(copies.filter((line) => /\/app\/(src|scripts)\b/.test(line))).toEqual([]);
    // node_modules/better-sqlite3 links to the local package that picks the driver.
    expect(copies).toContain('COPY --from=build /app/packages ./packages');
    // The build stage drops the development dependencies, so tsx is not in the image.
    const manifest = JSON.parse(read('package.json')) as { dependencies: Record<string, string> };
    expect(Object.keys(manifest.dependencies)).not.toContain('tsx');
    expect(runtime).toContain('USER node');
    expect(runtime.at(-1)).toMatch(/^CMD \["node", .*"dist\/src\/main\.js"\]$/);
  });

  test('every image compose runs is pinned to a release', () => {
    const images = [...COMPOSE.matchAll(/^\s+image: (\S+)$/gm)].map((match) => match[1]);
    expect(images.length).toBeGreaterThan(0);
    for (const image of images) expect(image).toMatch(/:\d+\.\d+(\.\d+)?(-[a-z0-9]+)?$/);
  });

  test("every process of the image, and the documented commands, run with the workers' malloc settings", () => {
    const settings = Object.entries(WORKER_MALLOC_ENVIRONMENT).map(([name, value]) => `${name}=${value}`);
    const env = stage('runtime').filter((line) => line.startsWith('ENV '));
    for (const setting of settings) expect(env.join(' ').split(' ')).toContain(setting);
    // The single-process command and the compiled CLI's page say the same, in the same words.
    const documented = settings.join(' ');
    expect(read('docs/operating/build-and-start.md')).toContain(
      `${documented} node --max-semi-space-size=4 dist/src/main.js`,
    );
    expect(read('docs/operating/cli.md')).toContain(documented);
    // `npm start` too (a WORKERS=0 process sets neither itself): the same settings unless the
    // environment gives its own, and node in place of the shell.
    const manifest = JSON.parse(read('package.json')) as { scripts: Record<string, string> };
    const defaults = Object.entries(WORKER_MALLOC_ENVIRONMENT)
      .map(([name, value]) => `${name}=\${${name}:-${value}}`)
      .join(' ');
    expect(manifest.scripts.start).toContain(
      `${defaults} exec node --max-semi-space-size=4 dist/src/main.js`,
    );
  });
});

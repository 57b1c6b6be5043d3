import { readFile } from 'node:fs/promises';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { describe, expect, jest, test } from '@jest/globals';
import { compilerBytesOf, compilerReadAsText } from '../../src/db/queryCompilerWasm.ts';

/*
 * The query compiler read from its file as text (src/db/queryCompilerWasm.ts) instead of imported as a
 * module: the same WebAssembly the generated client would load, for each provider; the client's own
 * loader only when the file is not there or holds no compiler. Every test that opens a database runs
 * on a client so configured.
 */

const runtime = dirname(createRequire(import.meta.url).resolve('@prisma/client/runtime/client'));
const IMPORT_NAME = './query_compiler_small_bg.js';

declare const WebAssembly: {
  Module: { new (bytes: Uint8Array): object; exports(module: object): { name: string; kind: string }[] };
};

function configOf(provider: string, importName: string) {
  const ownLoader = jest.fn(async () => 'own loader');
  const config = {
    activeProvider: provider,
    clientVersion: 'x',
    compilerWasm: { importName, getRuntime: async () => ({}), getQueryCompilerWasmModule: ownLoader },
  };
  return { config, ownLoader };
}

describe.each(['sqlite', 'postgresql'])('%s', (provider) => {
  test('the module decoded from the file is the one the base64 module exports', async () => {
    const file = join(runtime, `query_compiler_small_bg.${provider}.wasm-base64.mjs`);
    const source = await readFile(file, 'utf8');
    const { wasm } = (await import(file)) as { wasm: string };
    const bytes = compilerBytesOf(source);
    expect(bytes?.equals(Buffer.from(wasm, 'base64'))).toBe(true);

    const { config, ownLoader } = configOf(provider, IMPORT_NAME);
    const module = (await compilerReadAsText(
      config,
    ).compilerWasm.getQueryCompilerWasmModule()) as unknown as object;
    expect(ownLoader).not.toHaveBeenCalled();
    const names = WebAssembly.Module.exports(module).map((entry) => entry.name);
    expect(names).toContain('__wbindgen_start');
    expect(names).toEqual(
      WebAssembly.Module.exports(new WebAssembly.Module(bytes as Buffer)).map((e) => e.name),
    );
  });

  test('a compiler the runtime does not hold is left to the client', async () => {
    const { config, ownLoader } = configOf(provider, './query_compiler_nonesuch_bg.js');
    expect(await compilerReadAsText(config).compilerWasm.getQueryCompilerWasmModule()).toBe('own loader');
    expect(ownLoader).toHaveBeenCalledTimes(1);
  });
});

test("the generated client's configuration is read from text, and the client answers", async () => {
  const { PrismaBetterSqlite3 } = await import('@prisma/adapter-better-sqlite3');
  const { PrismaClient } = await import('../../src/generated/prisma/sqlite/client.ts');
  let ownLoaderCalled = false;
  let importName: string | undefined;
  const configOverride = (config: object) => {
    const given = config as {
      compilerWasm: { importName: string; getQueryCompilerWasmModule: () => Promise<unknown> };
    };
    importName = given.compilerWasm.importName;
    const own = given.compilerWasm.getQueryCompilerWasmModule;
    given.compilerWasm.getQueryCompilerWasmModule = () => {
      ownLoaderCalled = true;
      return own();
    };
    return compilerReadAsText(config);
  };
  const client = new PrismaClient({
    adapter: new PrismaBetterSqlite3({ url: ':memory:' }),
    ...({ __internal: { configOverride } } as object),
  });
  try {
    await client.$executeRawUnsafe(
      'CREATE TABLE "SystemSetting" ("key" TEXT PRIMARY KEY, "value" TEXT NOT NULL)',
    );
    await client.systemSetting.create({ data: { key: 'k', value: 'v' } });
    expect(await client.systemSetting.findMany()).toEqual([{ key: 'k', value: 'v' }]);
  } finally {
    await client.$disconnect();
  }
  expect(importName).toBe(IMPORT_NAME);
  expect(ownLoaderCalled).toBe(false);
});

test('a text without a compiler in it gives none', () => {
  expect(compilerBytesOf('export const wasm = "abc"')).toBeUndefined();
  // Long enough and base64, but not WebAssembly.
  expect(compilerBytesOf(`const wasm = "${Buffer.alloc(2000, 7).toString('base64')}"`)).toBeUndefined();
});

test('a configuration without a compiler is left as it is', () => {
  const config = { activeProvider: 'sqlite' };
  expect(compilerReadAsText(config)).toBe(config);
});

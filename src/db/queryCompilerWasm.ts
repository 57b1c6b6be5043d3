import { readFile } from 'node:fs/promises';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';

/*
 * Prisma's generated client loads its query compiler's WebAssembly by importing a module whose one
 * export is the compiled code as base64 (2.2 MB of text): that module's source and the string it
 * exports then stay in the heap for the life of the process — 4.2 MiB of the 39 MiB a serving
 * process's heap holds (bench/MEMORY.md). Here the same file is read as text and decoded; the text is
 * garbage once the module is compiled. The client is told through its constructor's
 * `__internal.configOverride`, and falls back to its own loader when the file is not what this
 * expects (a Prisma release that loads its compiler otherwise).
 */

/** The parts of the generated client's configuration this reads and replaces. */
interface CompilerConfig {
  activeProvider?: string;
  compilerWasm?: {
    importName: string;
    getQueryCompilerWasmModule: () => Promise<unknown>;
  };
}

// tsconfig's lib (ES2023, no DOM) has no WebAssembly declarations; this is the part used here.
declare const WebAssembly: { Module: new (bytes: Uint8Array) => unknown };

const WASM_MAGIC = Buffer.from([0x00, 0x61, 0x73, 0x6d]);

/** The base64 text's file for an import name such as `./query_compiler_small_bg.js`. */
function base64FileOf(importName: string, provider: string): string {
  const runtime = dirname(createRequire(import.meta.url).resolve('@prisma/client/runtime/client'));
  return join(runtime, `${importName.replace(/^\.\//, '').replace(/\.js$/, '')}.${provider}.wasm-base64.mjs`);
}

/** The compiler's code from `source` (the module's text), or undefined when it holds none. */
export function compilerBytesOf(source: string): Buffer | undefined {
  const literal = /"([A-Za-z0-9+/=]{1024,})"/.exec(source)?.[1];
  if (literal === undefined) return undefined;
  const bytes = Buffer.from(literal, 'base64');
  return bytes.subarray(0, 4).equals(WASM_MAGIC) ? bytes : undefined;
}

/** The client's configuration with its compiler read from the file as text (see above). */
export function compilerReadAsText<T>(config: T): T {
  const { activeProvider, compilerWasm } = config as CompilerConfig;
  if (compilerWasm === undefined || activeProvider === undefined) return config;
  const ownLoader = compilerWasm.getQueryCompilerWasmModule;
  const getQueryCompilerWasmModule = async () => {
    const source = await readFile(base64FileOf(compilerWasm.importName, activeProvider), 'utf8').catch(
      () => undefined,
    );
    const bytes = source === undefined ? undefined : compilerBytesOf(source);
    return bytes === undefined ? ownLoader() : new WebAssembly.Module(bytes);
  };
  return { ...config, compilerWasm: { ...compilerWasm, getQueryCompilerWasmModule } };
}

/**
 * The client constructor's option that applies compilerReadAsText, spread into its options: typed
 * as a bare object because the generated options type leaves `__internal` out.
 */
export const COMPILER_READ_AS_TEXT: object = { __internal: { configOverride: compilerReadAsText } };

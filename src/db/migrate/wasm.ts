import { readFile } from 'node:fs/promises';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import * as glue from '@prisma/schema-engine-wasm/schema_engine_bg';

export type SchemaEngineModule = typeof glue;

interface PanicRegistry {
  set_message(message: string): void;
}

declare global {
  // Read by wasm glue code (as `global.PRISMA_WASM_PANIC_REGISTRY`) when Rust code panics.
  var PRISMA_WASM_PANIC_REGISTRY: PanicRegistry | undefined;
}

// tsconfig's lib (ES2023, no DOM) has no WebAssembly declarations; this is the part used here.
declare const WebAssembly: {
  instantiate(
    bytes: Uint8Array,
    imports: Record<string, Record<string, unknown>>,
  ): Promise<{ instance: { exports: Record<string, unknown> } }>;
};

// Code, not state: the engine's WebAssembly module, loaded once and the same for every database.
let loading: Promise<SchemaEngineModule> | undefined;

/**
 * Instantiates the schema engine's WebAssembly once per module instance: a second instantiation
 * bound to the same glue module corrupts engines that are still alive. (Under jest every test file
 * has its own module registry, hence its own glue module and its own instance.)
 */
export function loadSchemaEngine(): Promise<SchemaEngineModule> {
  loading ??= instantiate().catch((error: unknown) => {
    loading = undefined;
    throw error;
  });
  return loading;
}

async function instantiate(): Promise<SchemaEngineModule> {
  const require = createRequire(import.meta.url);
  // The package's export map hides the .wasm file; it lies beside the glue module.
  const gluePath = require.resolve('@prisma/schema-engine-wasm/schema_engine_bg');
  const bytes = await readFile(join(dirname(gluePath), 'schema_engine_bg.wasm'));
  const imports: Record<string, unknown> = { ...glue };
  // The engine arms timers (up to 60 s) that it never clears; unref them so that they cannot keep
  // a finished process (a script, a jest worker) alive.
  for (const name of Object.keys(glue)) {
    if (name.startsWith('__wbg_setTimeout_')) {
      imports[name] = (callback: () => void, ms: number) => setTimeout(callback, ms >>> 0).unref();
    }
  }
  const { instance } = await WebAssembly.instantiate(bytes, { './schema_engine_bg.js': imports });
  glue.__wbg_set_wasm(instance.exports);
  (instance.exports.__wbindgen_start as () => void)();
  return glue;
}

/**
 * Runs an engine command with a panic registry that records the panic message, so that the error
 * can say what happened (without one, a panic surfaces as an unrelated TypeError). Prisma Client
 * installs its own registry; it is restored afterwards.
 */
export async function capturingPanics<T>(command: () => Promise<T>): Promise<T> {
  let panic: string | undefined;
  globalThis.PRISMA_WASM_PANIC_REGISTRY ??= { set_message() {} };
  const registry = globalThis.PRISMA_WASM_PANIC_REGISTRY;
  const previous = registry.set_message;
  registry.set_message = (message: string) => {
    panic = message;
  };
  try {
    return await command();
  } catch (error) {
    if (panic !== undefined) throw new Error(`schema engine panicked: ${panic}`, { cause: error });
    throw error;
  } finally {
    registry.set_message = previous;
  }
}

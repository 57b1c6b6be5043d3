import { createRequire } from 'node:module';

/*
 * express-openapi-validator compiles, with ajv, a validator of the OpenAPI 3.x meta-schema every
 * time it initialises (`new OpenAPISchemaValidator(...)` in its framework/index.js), also with
 * `validateApiSpec: false`, when it never calls it: CPU spent on a production worker's first
 * request for nothing (bench/RUNTIME.md, "Start-up"). Its class is replaced, in the validator's own
 * module, by one that builds the real validator on its first `validate` call: with the check on
 * (development, tests) it runs exactly as before; with it off the meta-schema is never compiled.
 *
 * The validator's module reads the class from this module's exports at each initialisation, so the
 * replacement takes effect there. If a version of the validator moves or renames it, nothing is
 * replaced and the validator works as it is (slower to start, never weaker).
 */

const SPEC_VALIDATOR_MODULE = 'express-openapi-validator/dist/framework/openapi.schema.validator.js';

/** What the validator passes to the class and calls on it (framework/openapi.schema.validator.js). */
export interface SpecValidatorOptions {
  version: string;
  validateApiSpec: boolean;
}

export interface SpecValidator {
  validate(document: unknown): { errors: unknown[] };
}

type SpecValidatorClass = new (options: SpecValidatorOptions) => SpecValidator;

interface SpecValidatorModule {
  OpenAPISchemaValidator?: unknown;
}

const DEFERRED = Symbol('cms.deferredSpecValidator');

/** The validator module as express-openapi-validator itself requires it (one instance per process). */
function specValidatorModule(): SpecValidatorModule {
  return createRequire(import.meta.url)(SPEC_VALIDATOR_MODULE) as SpecValidatorModule;
}

/**
 * Makes express-openapi-validator compile the OpenAPI meta-schema only when it checks a document.
 * Idempotent; returns whether the deferral is in place.
 */
export function deferSpecValidator(): boolean {
  const loaded = specValidatorModule();
  const current = loaded.OpenAPISchemaValidator;
  if (typeof current !== 'function') return false;
  if (DEFERRED in current) return true;
  const Eager = current as SpecValidatorClass;
  class DeferredSpecValidator implements SpecValidator {
    static readonly [DEFERRED] = true;
    readonly #options: SpecValidatorOptions;
    #validator: SpecValidator | undefined;
    constructor(options: SpecValidatorOptions) {
      this.#options = options;
    }
    validate(document: unknown): { errors: unknown[] } {
      this.#validator ??= new Eager(this.#options);
      return this.#validator.validate(document);
    }
  }
  loaded.OpenAPISchemaValidator = DeferredSpecValidator;
  return true;
}

/** The class the validator will use now (for tests). */
export function currentSpecValidator(): SpecValidatorClass {
  return specValidatorModule().OpenAPISchemaValidator as SpecValidatorClass;
}

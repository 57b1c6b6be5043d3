import { fileURLToPath } from 'node:url';
import { $RefParser } from '@apidevtools/json-schema-ref-parser';
import { z } from 'zod';

/*
 * The operations of openapi/cms.yaml, read at run time: routes are mounted from the contract, so a
 * path or method is never written twice. Request validation reads the same file itself.
 */

export const HTTP_METHODS = ['get', 'put', 'post', 'delete', 'patch', 'head', 'options'] as const;
export type HttpMethod = (typeof HTTP_METHODS)[number];

export interface ContractOperation {
  operationId: string;
  method: HttpMethod;
  /** The contract's path template, e.g. `/api/v1/contents/{siteId}`. */
  path: string;
}

export interface Contract {
  /** File the validator loads. */
  file: string;
  operations: ContractOperation[];
}

export const CONTRACT_FILE = fileURLToPath(new URL('../../openapi/cms.yaml', import.meta.url));

const operationSchema = z.looseObject({ operationId: z.string().min(1) });
const documentSchema = z.looseObject({
  paths: z.record(z.string(), z.looseObject({})).default({}),
});

export async function loadContract(file: string = CONTRACT_FILE): Promise<Contract> {
  const document = documentSchema.parse(await $RefParser.parse(file));
  const operations: ContractOperation[] = [];
  for (const [path, item] of Object.entries(document.paths)) {
    for (const method of HTTP_METHODS) {
      if (item[method] === undefined) continue;
      const operation = operationSchema.safeParse(item[method]);
      if (!operation.success)
        throw new Error(`${method.toUpperCase()} ${path} in ${file} has no operationId`);
      operations.push({ operationId: operation.data.operationId, method, path });
    }
  }
  return { file, operations };
}

/** `/a/{id}/b` → `/a/:id/b`. */
export function toExpressPath(template: string): string {
  return template.replace(/\{([^}]+)\}/g, ':$1');
}

/** The service's own contract, loaded once when this module is first imported. */
export const contract: Contract = await loadContract();

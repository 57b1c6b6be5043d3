import { mkdirSync } from 'node:fs';
import { dirname } from 'node:path';
import { CONTRACT_CACHE_FILE, writeContractCache } from '../src/contract.ts';

/*
 * `npm run build`, after compiling: writes the parsed and resolved contract next to the compiled
 * code, where the service reads it at start instead of parsing openapi/cms.yaml (src/contract.ts).
 */
mkdirSync(dirname(CONTRACT_CACHE_FILE), { recursive: true });
await writeContractCache();
process.stdout.write(`wrote ${CONTRACT_CACHE_FILE}\n`);

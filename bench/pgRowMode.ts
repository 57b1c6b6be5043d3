import pg from 'pg';
import { postgresStatement } from '../src/db/pointReads.ts';

/*
 * `DATABASE_URL=postgresql://… npx tsx bench/pgRowMode.ts` (a database the bench's import filled,
 * e.g. `npm run cms -- import` of bench/generate.ts's file): the CPU of reading 30 whole Content rows
 * by id, as pg makes row objects (a keyed store per value) and as the service's PostgreSQL reads make
 * them now (rows as arrays, one object literal per row: postgresStatement, src/db/pointReads.ts).
 * Process CPU (user + system) per read, 1,000 reads per block, the two alternated in four rounds.
 */

const url = process.env.DATABASE_URL ?? '';
if (!url.startsWith('postgres')) throw new Error('DATABASE_URL must name a PostgreSQL database');
const pool = new pg.Pool({ connectionString: url, max: 2 });
const picked = await pool.query<{ id: number }>(
  'SELECT "id" FROM "Content" ORDER BY "id" LIMIT 30 OFFSET 500',
);
const ids = picked.rows.map((row) => row.id);
const text = 'SELECT * FROM "Content" WHERE "id" = ANY($1::int[])';

const asObjects = async () => (await pool.query({ text, values: [ids] })).rows.length;
const statement = postgresStatement(async () => pool, pg.types);
const asArrays = async () => (await statement(text, [ids])).length;

async function cpuPerRead(read: () => Promise<number>, reads: number): Promise<number> {
  const start = process.cpuUsage();
  for (let i = 0; i < reads; i++) if ((await read()) !== ids.length) throw new Error('rows missing');
  const used = process.cpuUsage(start);
  return (used.user + used.system) / reads;
}

for (let i = 0; i < 3; i++) {
  await cpuPerRead(asObjects, 200);
  await cpuPerRead(asArrays, 200);
}
for (let round = 1; round <= 4; round++) {
  const objects = await cpuPerRead(asObjects, 1000);
  const arrays = await cpuPerRead(asArrays, 1000);
  console.log(
    `round ${round}: pg's row objects ${objects.toFixed(0)} µs, arrays made into rows ${arrays.toFixed(0)} µs a read`,
  );
}
await pool.end();

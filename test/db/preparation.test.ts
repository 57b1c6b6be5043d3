import { afterAll, beforeAll, expect, test } from '@jest/globals';
import Database from 'better-sqlite3';
import { sqliteFilePath } from '../../src/db/client.ts';
import { applyMigrations } from '../../src/db/migrate/index.ts';
import { openPreparation, type PreparationConnection } from '../../src/db/preparation.ts';
import { createEmptyDatabase, createTestDatabase, type TestDatabase } from '../support/database.ts';

/*
 * The statements `npm start` runs through the plain driver before its workers start
 * (src/db/preparation.ts), against what the service reads through Prisma, on the run's database.
 */

let database: TestDatabase;
let connection: PreparationConnection;

beforeAll(async () => {
  database = await createTestDatabase();
  connection = await openPreparation(database.url);
});

afterAll(async () => {
  await connection?.close();
  await database?.drop();
});

test('settingOnce stores the candidate when the key is missing and keeps the stored value after', async () => {
  const { db } = database.handle;
  expect(await connection.settingOnce('preparationTest', 'first-value')).toBe('first-value');
  expect(await connection.settingOnce('preparationTest', 'second-value')).toBe('first-value');
  expect(await db.systemSetting.findMany({ where: { key: 'preparationTest' } })).toEqual([
    { key: 'preparationTest', value: 'first-value' },
  ]);
  // A value Prisma wrote is read back as it is.
  await db.systemSetting.create({ data: { key: 'writtenByPrisma', value: 'ünïcödé €' } });
  expect(await connection.settingOnce('writtenByPrisma', 'ignored')).toBe('ünïcödé €');
});

test('siteCount counts the sites Prisma sees', async () => {
  const { db } = database.handle;
  expect(await connection.siteCount()).toBe(await db.site.count());
  await db.site.create({ data: { siteDir: 'preparation', siteName: 'Preparation', tableName: 'c' } });
  expect(await connection.siteCount()).toBe(await db.site.count());
  expect(await connection.siteCount()).toBeGreaterThan(0);
});

test('applySettings leaves a SQLite file in WAL mode (nothing to do on PostgreSQL)', async () => {
  if (database.handle.provider !== 'sqlite') {
    await connection.applySettings();
    return;
  }
  // A file of its own: SQLite changes the journal mode only while no other connection has it open,
  // as at a start, where the workers wait for the preparation.
  const empty = await createEmptyDatabase();
  try {
    await applyMigrations(empty.url);
    const own = await openPreparation(empty.url);
    await own.applySettings();
    await own.close();
    const file = new Database(sqliteFilePath(empty.url), { fileMustExist: true });
    try {
      expect(file.pragma('journal_mode', { simple: true })).toBe('wal');
    } finally {
      file.close();
    }
  } finally {
    await empty.drop();
  }
});

import { afterAll, beforeAll, describe, expect, test } from '@jest/globals';
import { hashPlainPassword, md5Hex, verifyMd5Password } from '../../src/domain/accounts/passwords.ts';
import {
  accountProblems,
  identifier,
  passwordProblem,
  userNameProblem,
} from '../../src/domain/accounts/rules.ts';
import { accountConflicts, assertAccountUnique } from '../../src/domain/accounts/unique.ts';
import { DomainError } from '../../src/domain/errors.ts';
import { createTestDatabase, type TestDatabase } from '../support/database.ts';

describe('account rules', () => {
  test('user names: 1 to 64 characters without whitespace, quote, colon or path separator', () => {
    for (const name of ['a', 'lisa', 'li.sa@example.org', '张三', 'x'.repeat(64)]) {
      expect(userNameProblem(name)).toBeUndefined();
    }
    for (const name of ['', 'li sa', "o'neil", 'a:b', 'a/b', 'a\\b', 'tab\there', 'x'.repeat(65)]) {
      expect(userNameProblem(name)).toBe("must be 1 to 64 characters without spaces, ', :, / or \\");
    }
  });

  test('passwords: at least 6 characters with a letter and a digit, unless the rule says otherwise', () => {
    for (const password of ['abc123', 'Secret123', 'пароль1'])
      expect(passwordProblem(password)).toBeUndefined();
    for (const password of ['ab12', 'abcdefg', '1234567', '']) {
      expect(passwordProblem(password)).toBe('must be at least 6 characters with a letter and a digit');
    }
    const relaxed = { minLength: 4, letter: false, digit: false };
    expect(passwordProblem('1234', relaxed)).toBeUndefined();
    expect(passwordProblem('123', relaxed)).toBe('must be at least 4 characters');
  });

  test('problems are named by field', () => {
    expect(accountProblems({ userName: 'a b', password: 'short' })).toEqual([
      { field: 'userName', message: "must be 1 to 64 characters without spaces, ', :, / or \\" },
      { field: 'password', message: 'must be at least 6 characters with a letter and a digit' },
    ]);
    expect(accountProblems({ userName: 'ab' })).toEqual([]);
  });

  test('identifiers are trimmed, and empty means none', () => {
    expect(identifier(' a@b.c ')).toBe('a@b.c');
    expect(identifier('  ')).toBeNull();
    expect(identifier('')).toBeNull();
    expect(identifier(undefined)).toBeNull();
  });

  test('a hashed password verifies against the MD5 of the plain text only', async () => {
    const stored = await hashPlainPassword('Secret123');
    expect(stored.passwordHash).toMatch(/^[0-9a-f]{64}$/);
    expect(await verifyMd5Password(md5Hex('Secret123'), stored)).toBe(true);
    expect(await verifyMd5Password(md5Hex('Secret123').toUpperCase(), stored)).toBe(true);
    expect(await verifyMd5Password(md5Hex('Secret124'), stored)).toBe(false);
  });
});

describe('account uniqueness', () => {
  let database: TestDatabase;
  beforeAll(async () => {
    database = await createTestDatabase();
    const { db } = database.handle;
    await db.user.create({
      data: {
        id: 1,
        userName: 'alice',
        email: 'alice@example.org',
        mobile: '100',
        openId: 'wx-1',
        passwordHash: 'h',
        passwordSalt: 's',
      },
    });
    await db.administrator.create({
      data: {
        id: 1,
        userName: 'admin',
        email: 'admin@example.org',
        mobile: '200',
        passwordHash: 'h',
        passwordSalt: 's',
      },
    });
  });
  afterAll(async () => {
    await database.drop();
  });

  test('names every value another account of the same kind holds', async () => {
    const { db } = database.handle;
    expect(
      await accountConflicts(db, 'users', {
        userName: 'alice',
        email: ' alice@example.org ',
        mobile: '101',
        openId: 'wx-1',
      }),
    ).toEqual([
      { field: 'userName', message: "'alice' is already used by another account" },
      { field: 'email', message: "'alice@example.org' is already used by another account" },
      { field: 'openId', message: "'wx-1' is already used by another account" },
    ]);
    expect(await accountConflicts(db, 'users', { userName: 'bob', email: '', mobile: null })).toEqual([]);
  });

  test('kinds are separate, and an account does not clash with itself', async () => {
    const { db } = database.handle;
    expect(await accountConflicts(db, 'users', { userName: 'admin', mobile: '200' })).toEqual([]);
    expect(await accountConflicts(db, 'administrators', { userName: 'alice', mobile: '100' })).toEqual([]);
    expect(await accountConflicts(db, 'administrators', { userName: 'admin', mobile: '200' }, 1)).toEqual([]);
    expect(await accountConflicts(db, 'administrators', { mobile: '200' }, 2)).toEqual([
      { field: 'mobile', message: "'200' is already used by another account" },
    ]);
  });

  test('a clash is a conflict error naming the fields', async () => {
    const { db } = database.handle;
    const error = await assertAccountUnique(db, 'users', { userName: 'alice', mobile: '100' }).catch(
      (caught: unknown) => caught,
    );
    expect(error).toBeInstanceOf(DomainError);
    expect(error).toMatchObject({
      code: 'conflict',
      message:
        "userName 'alice' is already used by another account; mobile '100' is already used by another account",
      fields: [
        { field: 'userName', message: "'alice' is already used by another account" },
        { field: 'mobile', message: "'100' is already used by another account" },
      ],
    });
    await expect(assertAccountUnique(db, 'users', { userName: 'carol' })).resolves.toBeUndefined();
  });
});

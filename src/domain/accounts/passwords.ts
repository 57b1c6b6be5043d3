import { createHash, randomBytes, scrypt, timingSafeEqual } from 'node:crypto';

/*
 * Clients send passwords as the lower-case hex MD5 of the password (login, old password of a
 * change) or in plain text (new passwords). The server keeps only scrypt(md5hex(password), salt),
 * so both forms can be checked and nothing stored is reversible.
 */

const KEY_LENGTH = 32;
const SCRYPT_OPTIONS = { N: 16384, r: 8, p: 1, maxmem: 64 * 1024 * 1024 };

export interface StoredPassword {
  passwordHash: string;
  passwordSalt: string;
}

export function md5Hex(text: string): string {
  return createHash('md5').update(text, 'utf8').digest('hex');
}

function derive(md5hex: string, salt: string): Promise<Buffer> {
  return new Promise((resolve, reject) => {
    scrypt(md5hex.toLowerCase(), salt, KEY_LENGTH, SCRYPT_OPTIONS, (error, key) =>
      error ? reject(error) : resolve(key),
    );
  });
}

/** Hash a password given in plain text. */
export async function hashPlainPassword(plain: string): Promise<StoredPassword> {
  const passwordSalt = randomBytes(16).toString('hex');
  const key = await derive(md5Hex(plain), passwordSalt);
  return { passwordHash: key.toString('hex'), passwordSalt };
}

/** Check a password given as its MD5 hex digest, in constant time. */
export async function verifyMd5Password(md5hex: string, stored: StoredPassword): Promise<boolean> {
  const expected = Buffer.from(stored.passwordHash, 'hex');
  const actual = await derive(md5hex, stored.passwordSalt);
  return expected.length === actual.length && timingSafeEqual(expected, actual);
}

import { execFile } from 'node:child_process';
import { createHash } from 'node:crypto';
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { describe, expect, test } from '@jest/globals';
import pino from 'pino';
import {
  encodingsOf,
  findLeaks,
  type Kept,
  LeakCollector,
  observeExchange,
  type Secret,
} from '../support/leaks.ts';

/*
 * The run-wide secret scan (test/support/leaks.ts, run after each file by leakEnvironment.ts) must
 * be able to fail: these tests feed it leaks of every kind it claims to find, each through its own
 * collector (the file's own collector stays clean), and run a fixture file in a jest of its own to
 * see the environment fail a file whose tests all pass.
 */

const KEY = 'cms_Zk3-9qWv_7RtYbN2mXe8LcPd4sHgJ6aFuV1oTiQ0wEy';
const text = (value: string): Secret => ({ value, label: 'the key', kind: 'text' });
const found = (kept: Kept[], secrets: Secret[]) => findLeaks(kept, secrets).map((leak) => leak.encoding);

describe('findLeaks', () => {
  test.each([
    ['raw', KEY, `{"msg":"got ${KEY}"}`],
    ['JSON-escaped', 'p"ss\\word-with-quote', JSON.stringify({ msg: 'p"ss\\word-with-quote' })],
    ['percent-encoded', 's3cret/with+signs', `GET /a?k=${encodeURIComponent('s3cret/with+signs')}&b=1`],
    ['form-encoded', 'two words here', 'body=two+words+here'],
    [
      'percent-encoded bytes',
      KEY,
      `/a?apiKey=${Buffer.from(KEY).toString('hex').replace(/../g, '%$&').toUpperCase()}`,
    ],
  ])('finds a secret %s', (encoding, value, line) => {
    expect(found([{ source: 'log', text: line }], [text(value)])).toEqual([encoding]);
  });

  test.each([0, 1, 2])(
    'finds a secret base64-encoded at byte offset %i of a longer encoded text',
    (shift) => {
      const encoded = Buffer.from(`${'x'.repeat(shift)}Basic user:${KEY}!`).toString('base64');
      expect(found([{ source: 'log', text: `{"authorization":"${encoded}"}` }], [text(KEY)])).toEqual([
        expect.stringMatching(/^base64 \(shift \d\)$/),
      ]);
      const url = Buffer.from(`${'x'.repeat(shift)}${KEY}??>>`).toString('base64url');
      expect(found([{ source: 'log', text: url }], [text(KEY)])).toEqual([expect.stringMatching(/^base64/)]);
    },
  );

  test('names the secret and the source, and shows the text around it without the secret', () => {
    const [leak] = findLeaks([{ source: 'response GET /x', text: `before ${KEY} after` }], [text(KEY)]);
    expect(leak).toEqual({
      label: 'the key',
      encoding: 'raw',
      source: 'response GET /x',
      excerpt: 'before <secret> after',
    });
  });

  test('finds nothing in texts without the secret, or with only a part of it', () => {
    expect(findLeaks([{ source: 'log', text: `${KEY.slice(0, 20)} ${KEY.slice(21)}` }], [text(KEY)])).toEqual(
      [],
    );
  });

  test('short codes match only as a whole word, in any case', () => {
    const code: Secret = { value: 'K7PQ', label: 'captcha', kind: 'word' };
    expect(findLeaks([{ source: 'log', text: '"url":"/a?c=k7pq&x=1"' }], [code])).toEqual([]);
    expect(found([{ source: 'log', text: 'answer K7PQ given' }], [code])).toEqual(['raw']);
    expect(findLeaks([{ source: 'log', text: 'XK7PQ K7PQZ xK7PQ K7PQz' }], [code])).toEqual([]);
  });

  test('a code of digits is no leak as a group of a UUID (a request id), and is one elsewhere', () => {
    const code: Secret = { value: '7438', label: 'captcha', kind: 'word' };
    const requestId = '{"req":{"id":"8a05f352-7438-4b65-a9ca-e0dda004422b","method":"POST"}}';
    expect(findLeaks([{ source: 'log', text: requestId }], [code])).toEqual([]);
    expect(found([{ source: 'log', text: `${requestId} answer 7438 given` }], [code])).toEqual(['raw']);
    expect(found([{ source: 'log', text: '"code":"7438"' }], [code])).toEqual(['raw']);
  });

  test('every encoding it names is a distinct spelling', () => {
    const forms = [...encodingsOf(KEY).values()];
    expect(new Set(forms).size).toBe(forms.length);
    expect(forms).toContain(KEY);
  });
});

describe('LeakCollector', () => {
  test('a secret logged through a logger on its destination is reported; values too short are not secrets', () => {
    const collector = new LeakCollector();
    const logger = pino({ level: 'trace' }, collector.logDestination());
    collector.secret(KEY, 'a fixture key');
    collector.secret('short', 'too short');
    logger.debug({ key: KEY }, 'short');
    expect(collector.report()).toMatch(/^1 secret\(s\) found .*\n- a fixture key \(raw\) in log: /);
  });

  test('a password sent is a secret, and so are its MD5 digests in either case', () => {
    const collector = new LeakCollector();
    const digest = createHash('md5').update('Orchid-7-Lantern').digest('hex');
    collector.password('Orchid-7-Lantern', 'password');
    collector.keep('log', '{"unrelated":"d6c3b9c2f3d7d0fcb8d59d0e1f0b5f37"}');
    expect(collector.leaks()).toEqual([]);
    collector.keep('plain', '{"sent":"Orchid-7-Lantern"}');
    collector.keep('lower', `{"md5":"${digest}"}`);
    collector.keep('upper', `{"md5":"${digest.toUpperCase()}"}`);
    expect(collector.leaks().map((leak) => `${leak.label} in ${leak.source}`)).toEqual([
      'password in plain',
      'MD5 of password in lower',
      'MD5 of password in upper',
    ]);
  });

  test('an exchange registers what the client sent and what the answer issued; only the issuing field may hold it', async () => {
    const collector = new LeakCollector();
    const token = `eyJhbGciOiJIUzI1NiJ9.${'a'.repeat(40)}.${'b'.repeat(43)}`;
    const server = createServer((req: IncomingMessage & { body?: unknown }, res: ServerResponse) => {
      observeExchange(req, res, collector);
      let raw = '';
      req.on('data', (chunk: Buffer) => {
        raw += chunk.toString();
      });
      req.on('end', () => {
        req.body = JSON.parse(raw || '{}');
        res.setHeader('Content-Type', 'application/json');
        res.setHeader('Set-Cookie', 'session=cookie-value-0123456789; HttpOnly');
        const echo = req.url === '/echo' ? { echo: req.headers['x-ss-api-key'] } : {};
        res.end(JSON.stringify({ accessToken: token, ...echo }));
      });
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const { port } = server.address() as AddressInfo;
    try {
      const send = (path: string) =>
        fetch(`http://127.0.0.1:${port}${path}`, {
          method: 'POST',
          headers: { 'X-SS-API-KEY': KEY, 'Content-Type': 'application/json' },
          body: JSON.stringify({ account: 'lisa', newPassword: 'Harbour-42-Quartz' }),
        }).then((response) => response.text());
      expect(await send('/login')).toContain(token);
      expect(collector.leaks()).toEqual([]);
      collector.keep('log', `{"msg":"issued ${token}"}`);
      collector.keep('log', '{"cookie":"cookie-value-0123456789"}');
      collector.keep('log', '{"plain":"Harbour-42-Quartz"}');
      expect((await send('/echo')).length).toBeGreaterThan(0);
      expect(
        collector
          .leaks()
          .map((leak) => `${leak.label} in ${leak.source}`)
          .sort(),
      ).toEqual([
        'API key sent in response POST /echo',
        'access token issued in log',
        'cookie issued in log',
        'newPassword sent in log',
      ]);
    } finally {
      server.close();
    }
  });

  test('a value shaped like a secret of the service is one wherever it was sent, even as plain data', async () => {
    const collector = new LeakCollector();
    const token = `eyJhbGciOiJIUzI1NiJ9.${'c'.repeat(40)}.${'d'.repeat(43)}`;
    const captcha = `v1.eyJpZCI6IngifQ.${'e'.repeat(43)}`;
    const inPath = `cms_${'P'.repeat(43)}`;
    const inReferer = `cms_${'R'.repeat(43)}`;
    const server = createServer((req: IncomingMessage, res: ServerResponse) => {
      observeExchange(req, res, collector);
      req.resume();
      req.on('end', () => res.end('{}'));
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const { port } = server.address() as AddressInfo;
    try {
      const response = await fetch(`http://127.0.0.1:${port}/a/${inPath};k=${encodeURIComponent(captcha)}`, {
        headers: {
          'X-Api-Key': KEY,
          Referer: `https://front.example/?key=${inReferer}`,
          'X-Other': `value=${encodeURIComponent(token)}`,
        },
      });
      await response.text();
      expect(collector.leaks()).toEqual([]);
      collector.keep(
        'log',
        `{"url":"/a/${inPath}","referer":"${inReferer}","x":"${KEY} ${token} ${captcha}"}`,
      );
      expect(new Set(collector.leaks().map((leak) => leak.label))).toEqual(
        new Set([
          'API-key-shaped value sent in the URL',
          'captcha-token-shaped value sent in the URL',
          'API-key-shaped value sent in header X-Api-Key',
          'API-key-shaped value sent in header Referer',
          'JWT-shaped value sent in header X-Other',
        ]),
      );
      expect(collector.leaks()).toHaveLength(5);
    } finally {
      server.close();
    }
  });

  test('a value sent in a password field is a secret only when it looks like a password', () => {
    const collector = new LeakCollector();
    collector.password('newsTech', 'fuzzed word', true);
    collector.password('release notes 2', 'with spaces', true);
    collector.password('Quartz2031x', 'password sent', true);
    collector.keep('log', '{"msg":"newsTech release notes 2 Quartz2031x"}');
    expect(collector.leaks().map((leak) => leak.label)).toEqual(['password sent']);
  });

  test('a value the client sent as a credential and also as plain data, or printed in the contract, is no secret; an issued one stays one', () => {
    const collector = new LeakCollector();
    collector.secret('cms_sent-in-a-header-and-a-path', 'API key sent', 'text', true);
    collector.secret('cms_issued-and-sent-as-plain-data', 'API key issued');
    // The contract's own example of an MD5 password: public, whoever sends it.
    collector.secret('5f4dcc3b5aa765d61d8327deb882cf99', 'example sent', 'text', true);
    collector.plain('cms_sent-in-a-header-and-a-path');
    collector.plain('cms_issued-and-sent-as-plain-data');
    collector.keep(
      'log',
      '{"url":"/a/cms_sent-in-a-header-and-a-path/cms_issued-and-sent-as-plain-data/5f4dcc3b5aa765d61d8327deb882cf99"}',
    );
    expect(collector.leaks().map((leak) => leak.label)).toEqual(['API key issued']);
  });

  test("a process's log lines are scanned for every secret, its console only for those known before it started", () => {
    const collector = new LeakCollector();
    collector.secret('cms_known-before-the-process-started', 'known key');
    let output = '';
    collector.watchProcess('service', () => output);
    const printed = 'cms_printed-once-on-the-console-000000';
    output = `Bootstrap API key (shown only this once):\n  ${printed}\n  User: demo / Pw-0123456789abcd\n`;
    expect(collector.leaks()).toEqual([]);
    output += `{"level":30,"msg":"request with ${printed}"}\n{"level":30,"msg":"password Pw-0123456789abcd"}\n`;
    output += 'console: cms_known-before-the-process-started\n';
    expect(
      collector
        .leaks()
        .map((leak) => `${leak.label} in ${leak.source}`)
        .sort(),
    ).toEqual([
      'API key printed by a process in service (log)',
      'known key in service (console)',
      'password printed by a process in service (log)',
    ]);
  });
});

test('the test environment fails a file whose tests pass when a secret reached a log', async () => {
  const run = await new Promise<{ code: number; output: string }>((resolve) => {
    execFile(
      process.execPath,
      [
        'node_modules/jest/bin/jest.js',
        '--maxWorkers=1',
        '--rootDir',
        '.',
        '--testMatch',
        '<rootDir>/test/support/fixtures/leaky.fixture.ts',
      ],
      { env: { ...process.env, NODE_OPTIONS: '--experimental-vm-modules' }, timeout: 120_000 },
      (error, stdout, stderr) => {
        const code = error ? (typeof error.code === 'number' ? error.code : -1) : 0;
        resolve({ code, output: `${stdout}${stderr}` });
      },
    );
  });
  expect(run.output).toContain('Tests:       1 passed, 1 total');
  expect(run.output).toContain("- API key 'leaked' from the fixture (raw) in log:");
  expect(run.code).toBe(1);
}, 120_000);

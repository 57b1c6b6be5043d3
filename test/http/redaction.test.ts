import { parse } from 'node:querystring';
import { expect, test } from '@jest/globals';
import { REDACTED, redactUrl } from '../../src/http/logging.ts';

/*
 * Logged URLs are redacted by the name the app's own query parser (node's querystring, express's
 * "simple" parser) reads: whatever spelling a client uses, if the parser sees a secret's name, the
 * log does not see its value.
 */

test.each([
  ['api%4Bey%zz=cms_k1-value', 'apiKey%zz'],
  ['%61pi%4b%65y=cms_k1-value', 'apiKey'],
  ['api+key=cms_k1-value', 'api key'],
  ['access%5Ftoken=eyJ.x.y', 'access_token'],
  ['pass%77ord=Orchid-7-Lantern', 'password'],
])('%s (parsed as %s) is redacted', (query, parsedName) => {
  expect(Object.keys(parse(query))).toEqual([parsedName]);
  const logged = redactUrl(`/api/v1/ping?x=1&${query}`);
  expect(logged).toBe(`/api/v1/ping?x=1&${REDACTED}`);
  expect(logged).not.toContain(query.split('=')[1]);
});

test('names the parser does not read as a secret keep their values', () => {
  expect(redactUrl('/a?%zzapiKey=v&title=apiKey')).toBe('/a?%zzapiKey=v&title=apiKey');
});

import { parse } from 'node:querystring';
import { expect, test } from '@jest/globals';
import express from 'express';
import supertest from 'supertest';
import { queryOnce } from '../../src/http/queryOnce.ts';

test('the query is parsed once per request, however many stages read it', async () => {
  let parses = 0;
  const app = express();
  app.set('query parser', (text: string) => {
    parses++;
    return parse(text);
  });
  app.get('/', (req, res) => {
    const first = queryOnce(req);
    res.json({ same: queryOnce(req) === first, n: first.n, parses });
  });
  for (const n of ['1', '2']) {
    parses = 0;
    const response = await supertest(app).get('/').query({ n });
    expect(response.body).toEqual({ same: true, n, parses: 1 });
  }
});

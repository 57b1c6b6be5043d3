import type { Worker } from 'node:cluster';
import { createHash, timingSafeEqual } from 'node:crypto';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Request, RequestHandler } from 'express';
import type { Logger } from 'pino';
import {
  AggregatorRegistry,
  Counter,
  collectDefaultMetrics,
  Gauge,
  Histogram,
  type MetricObjectWithValues,
  type MetricValue,
  Registry,
} from 'prom-client';
import { cmsMessage } from '../messages.ts';
import { describeError } from './logging.ts';
import { problem } from './problem.ts';

/*
 * Prometheus metrics (prom-client), off unless METRICS_PORT is set. They are served on a port of
 * their own, never on the API port: a scraper needs no API key, the API's rate limits and logs
 * stay the clients', and the port can be left unpublished or firewalled (METRICS_TOKEN adds a
 * bearer token on top). Under the supervisor (WORKERS ≥ 1) that port is the supervisor's: on each
 * scrape it asks every serving worker for its figures over the cluster's IPC channel and answers
 * their sum (prom-client's AggregatorRegistry.aggregate), so one scrape sees the whole node
 * whichever worker would have got the connection. With WORKERS=0 the single process serves its own.
 *
 * Label values are bounded: requests are labelled by the contract's operationId (every path that
 * is no operation is one label, `unmatched`) and status code; queries by the kind of statement,
 * taken from its first word. No path, parameter, SQL text or credential ever becomes a label.
 */

/** The label of every request that matches no operation of the contract (unknown paths, /docs, …). */
export const UNMATCHED = 'unmatched';
/** The status label of a request whose client went away before the response was complete. */
export const ABORTED = 'aborted';

export const METRIC_NAMES = {
  requests: 'cms_http_requests_total',
  requestDuration: 'cms_http_request_duration_seconds',
  queryDuration: 'cms_db_query_duration_seconds',
  workersServing: 'cms_workers_serving',
  workersReporting: 'cms_workers_reporting',
  webhookAttempts: 'cms_webhook_attempts_total',
  webhookQueueDepth: 'cms_webhook_queue_depth',
  webhookOldestDue: 'cms_webhook_oldest_due_seconds',
} as const;

/** What the webhook queue holds now (pending deliveries, and how long the oldest due one has waited). */
export type WebhookQueueProbe = () => Promise<{ depth: number; oldestDueSeconds: number }>;

/** Seconds; from the cheapest request (a cached key check) to the 30 s request limit (src/http/server.ts). */
const REQUEST_BUCKETS = [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30];
/** Seconds; from an indexed SQLite read (well under a millisecond) to PostgreSQL's 15 s statement_timeout. */
const QUERY_BUCKETS = [0.0001, 0.00025, 0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 1, 5, 15];

export type StatementKind = 'read' | 'write' | 'transaction' | 'other';

const STATEMENT_KINDS: Record<string, StatementKind> = {
  SELECT: 'read',
  WITH: 'read',
  INSERT: 'write',
  UPDATE: 'write',
  DELETE: 'write',
  BEGIN: 'transaction',
  COMMIT: 'transaction',
  ROLLBACK: 'transaction',
  SAVEPOINT: 'transaction',
  RELEASE: 'transaction',
};

/** The kind of a statement, from its first word only: the text itself never leaves this function. */
export function statementKind(sqlText: string): StatementKind {
  const word = /^\s*([A-Za-z]+)/.exec(sqlText)?.[1]?.toUpperCase();
  return (word !== undefined && STATEMENT_KINDS[word]) || 'other';
}

/** The figures of one process: its requests, its database queries and Node's process metrics. */
export class ServiceMetrics {
  readonly registry = new Registry();
  readonly #requests: Counter<'operation' | 'status'>;
  readonly #requestDuration: Histogram<'operation'>;
  readonly #queryDuration: Histogram<'statement'>;
  readonly #webhookAttempts: Counter<'outcome'>;
  #queueProbe: WebhookQueueProbe | undefined;

  constructor() {
    // process_cpu_seconds_total, process_resident_memory_bytes, nodejs_eventloop_lag_*, nodejs_gc_*, …
    collectDefaultMetrics({ register: this.registry });
    const registers = [this.registry];
    this.#requests = new Counter({
      name: METRIC_NAMES.requests,
      help: 'HTTP requests answered, by operationId of the contract and status code',
      labelNames: ['operation', 'status'],
      registers,
    });
    this.#requestDuration = new Histogram({
      name: METRIC_NAMES.requestDuration,
      help: 'Time from a request reaching the app to its response being sent, by operationId',
      labelNames: ['operation'],
      buckets: REQUEST_BUCKETS,
      registers,
    });
    this.#queryDuration = new Histogram({
      name: METRIC_NAMES.queryDuration,
      help: 'Time the database driver took for each successful query, by kind of statement',
      labelNames: ['statement'],
      buckets: QUERY_BUCKETS,
      registers,
    });
    this.#webhookAttempts = new Counter({
      name: METRIC_NAMES.webhookAttempts,
      help: 'Webhook delivery attempts this process made, by outcome (succeeded, failed)',
      labelNames: ['outcome'],
      registers,
    });
    const probe = () => this.#queueProbe?.();
    new Gauge({
      name: METRIC_NAMES.webhookQueueDepth,
      help: 'Webhook deliveries pending (due or waiting for a retry), read from the database at scrape time',
      registers,
      // Every worker reads the same queue: the supervisor's sum would multiply it.
      aggregator: 'max',
      async collect() {
        const now = await probe();
        if (now) this.set(now.depth);
      },
    });
    new Gauge({
      name: METRIC_NAMES.webhookOldestDue,
      help: 'Seconds the oldest due webhook delivery has been waiting (0 when none is due)',
      registers,
      aggregator: 'max',
      async collect() {
        const now = await probe();
        if (now) this.set(now.oldestDueSeconds);
      },
    });
  }

  /** Counts webhook attempts (src/domain/events/delivery.ts calls it after each). */
  readonly webhookHooks = {
    attempted: (outcome: 'succeeded' | 'failed') => this.#webhookAttempts.inc({ outcome }),
  };

  /** Where the queue gauges read from; set by the process that runs a delivery worker. */
  observeWebhookQueue(probe: WebhookQueueProbe): void {
    this.#queueProbe = probe;
  }

  /**
   * The first stage of the app: starts the clock, and names the request by the contract operation
   * its method and path matched (`operationOf`: the pipeline's match, src/http/pipeline.ts, made
   * before any stage runs), so that requests refused before dispatch (429, 401, 400) are counted
   * under their operation too.
   */
  requests(operationOf: (req: Request) => { operationId: string } | undefined): RequestHandler {
    return (req, res, next) => {
      const started = performance.now();
      res.once('close', () => {
        const operation = operationOf(req)?.operationId ?? UNMATCHED;
        const status = res.writableFinished ? String(res.statusCode) : ABORTED;
        this.#requests.inc({ operation, status });
        this.#requestDuration.observe({ operation }, (performance.now() - started) / 1000);
      });
      next();
    };
  }

  /** For createDb's onQuery: times a query by its kind; the SQL text is not kept. */
  readonly observeQuery = (sqlText: string, durationMs: number): void => {
    this.#queryDuration.observe({ statement: statementKind(sqlText) }, durationMs / 1000);
  };
}

export interface MetricsEndpointOptions {
  port: number;
  host?: string | undefined;
  /** When set, a scrape must carry `Authorization: Bearer <token>`. */
  token?: string | undefined;
  logger: Logger;
  /** The exposition text of one scrape. */
  collect(): Promise<string>;
}

export interface MetricsEndpoint {
  /** The port it listens on (the configured one, or the one the system chose for port 0). */
  port: number;
  close(): Promise<void>;
}

const digest = (text: string) => createHash('sha256').update(text).digest();

/** Compares digests, so that neither the token's content nor its length shows in the timing. */
function tokenMatches(header: string | undefined, expected: Buffer): boolean {
  const presented = /^Bearer\s+(\S+)\s*$/i.exec(header ?? '')?.[1];
  return presented !== undefined && timingSafeEqual(digest(presented), expected);
}

function sendProblem(
  res: ServerResponse,
  status: number,
  detail: string,
  headers: Record<string, string> = {},
) {
  const body = JSON.stringify(problem(status, detail));
  res.writeHead(status, {
    'Content-Type': 'application/problem+json; charset=utf-8',
    'Content-Length': Buffer.byteLength(body),
    ...headers,
  });
  res.end(body);
}

/** The metrics listener: `GET /metrics` and nothing else. */
export function serveMetrics(options: MetricsEndpointOptions): Promise<MetricsEndpoint> {
  const { logger } = options;
  const expected = options.token === undefined ? undefined : digest(options.token);
  const handle = async (req: IncomingMessage, res: ServerResponse) => {
    const path = (req.url ?? '/').split('?', 1)[0];
    if (path !== '/metrics') {
      sendProblem(res, 404, 'Metrics are served at /metrics');
      return;
    }
    if (req.method !== 'GET' && req.method !== 'HEAD') {
      sendProblem(res, 405, 'Metrics are read with GET', { Allow: 'GET, HEAD' });
      return;
    }
    if (expected !== undefined && !tokenMatches(req.headers.authorization, expected)) {
      sendProblem(res, 401, 'Metrics need the bearer token set in METRICS_TOKEN', {
        'WWW-Authenticate': 'Bearer realm="metrics"',
      });
      return;
    }
    try {
      const text = await options.collect();
      res.writeHead(200, {
        'Content-Type': Registry.PROMETHEUS_CONTENT_TYPE,
        'Content-Length': Buffer.byteLength(text),
        'Cache-Control': 'no-store',
      });
      res.end(req.method === 'HEAD' ? undefined : text);
    } catch (error) {
      logger.warn({ err: describeError(error) }, 'metrics could not be collected');
      sendProblem(res, 503, 'Metrics could not be collected; retry later', { 'Retry-After': '1' });
    }
  };
  const server: Server = createServer((req, res) => {
    void handle(req, res);
  });
  // A scraper keeps its connection; nothing else should hold one long.
  server.keepAliveTimeout = 65_000;
  server.headersTimeout = 10_000;
  server.requestTimeout = 10_000;
  return new Promise((resolve, reject) => {
    server.once('error', reject);
    server.listen(options.port, options.host, () => {
      server.off('error', reject);
      const port = (server.address() as AddressInfo).port;
      logger.info({ metricsPort: port }, 'metrics listening');
      resolve({
        port,
        // A scrape is not worth waiting for at shutdown: open connections are cut.
        close: () =>
          new Promise<void>((done) => {
            server.close(() => done());
            server.closeAllConnections();
          }),
      });
    });
  });
}

/*
 * The supervisor's side of cluster mode. prom-client's own AggregatorRegistry.clusterMetrics()
 * asks every connected worker and fails the whole scrape after 5 s when one does not answer — as a
 * worker still starting (or being rolled out) does not. So the request goes only to the workers
 * the supervisor counts as serving, each gets a short deadline, a silent one is left out of that
 * scrape (cms_workers_reporting < cms_workers_serving shows it), and only the summing is
 * prom-client's.
 */

type MetricsJson = MetricObjectWithValues<MetricValue<string>>[];

/** Supervisor to worker: send your figures. */
export interface MetricsRequest {
  cms: 'metrics';
  id: number;
}

/** Worker to supervisor. */
export interface MetricsReply {
  cms: 'metrics';
  id: number;
  metrics: MetricsJson;
}

function isMetricsRequest(message: unknown): message is MetricsRequest {
  const request = cmsMessage(message, 'metrics');
  return typeof request?.id === 'number' && request.metrics === undefined;
}

function isMetricsReply(message: unknown, id: number): message is MetricsReply {
  const reply = cmsMessage(message, 'metrics');
  return reply?.id === id && Array.isArray(reply.metrics);
}

/** How long a scrape waits for a worker. */
export const WORKER_REPLY_TIMEOUT_MS = 2000;

/** A worker's side: answers the supervisor's requests with this process's figures. */
export function answerSupervisor(metrics: ServiceMetrics): MetricsEndpoint {
  const onMessage = (message: unknown) => {
    if (!isMetricsRequest(message)) return;
    void metrics.registry.getMetricsAsJSON().then((figures) => {
      const reply: MetricsReply = { cms: 'metrics', id: message.id, metrics: figures };
      // A worker being retired has lost its channel: that scrape does without it.
      if (process.connected) process.send?.(reply, undefined, {}, () => undefined);
    });
  };
  process.on('message', onMessage);
  return {
    port: 0,
    close: async () => {
      process.off('message', onMessage);
    },
  };
}

function askWorker(worker: Worker, id: number, timeoutMs: number): Promise<MetricsJson | undefined> {
  return new Promise((resolve) => {
    const finish = (figures: MetricsJson | undefined) => {
      clearTimeout(timer);
      worker.off('message', onMessage);
      worker.off('exit', onExit);
      resolve(figures);
    };
    const onMessage = (message: unknown) => {
      if (isMetricsReply(message, id)) finish(message.metrics);
    };
    const onExit = () => finish(undefined);
    const timer = setTimeout(() => finish(undefined), timeoutMs);
    worker.on('message', onMessage);
    worker.once('exit', onExit);
    const request: MetricsRequest = { cms: 'metrics', id };
    try {
      worker.send(request, undefined, (error: Error | null) => {
        if (error !== null) finish(undefined);
      });
    } catch {
      finish(undefined);
    }
  });
}

/** The supervisor's collector: the sum of its serving workers' figures, plus its own two gauges. */
export function clusterCollector(
  servingWorkers: () => Worker[],
  timeoutMs: number = WORKER_REPLY_TIMEOUT_MS,
): () => Promise<string> {
  const own = new Registry();
  const serving = new Gauge({
    name: METRIC_NAMES.workersServing,
    help: 'Worker processes the supervisor has in rotation',
    registers: [own],
  });
  const reporting = new Gauge({
    name: METRIC_NAMES.workersReporting,
    help: 'Workers whose figures this scrape holds (fewer than serving: one did not answer in time)',
    registers: [own],
  });
  let next = 0;
  return async () => {
    const workers = servingWorkers();
    const id = next++;
    const answers = await Promise.all(workers.map((worker) => askWorker(worker, id, timeoutMs)));
    const figures = answers.filter((answer): answer is MetricsJson => answer !== undefined);
    serving.set(workers.length);
    reporting.set(figures.length);
    const aggregated = AggregatorRegistry.aggregate<typeof Registry.PROMETHEUS_CONTENT_TYPE>([
      ...figures,
      await own.getMetricsAsJSON(),
    ]);
    return aggregated.metrics();
  };
}

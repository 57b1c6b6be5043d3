import cluster from 'node:cluster';
import { randomUUID } from 'node:crypto';
import type { Server } from 'node:http';
import { hostname } from 'node:os';
import type { Logger } from 'pino';
import { composeServices } from './compose.ts';
import type { Config } from './config.ts';
import { DeliveryWorker, queueState } from './domain/events/delivery.ts';
import { OutboundPolicy } from './domain/events/outbound.ts';
import { createApp } from './http/app.ts';
import { describeError } from './http/logging.ts';
import { createHttpServer, drainServer } from './http/server.ts';
import type { RestartWorkers } from './operations/types.ts';
import { StartFailure } from './startFailure.ts';
import type { SharedState } from './state/port.ts';
import {
  isRollLeaseRequest,
  isStopMessage,
  REPLACEMENT_WORKER_ENV,
  RESTART_CHANNEL,
  RESTART_ID,
  type RestartMessage,
  ROLL_LEASE_KEY,
  type RollLeaseAnswer,
  type RollLeaseOutcome,
  type RollLeaseRequest,
} from './supervisor.ts';

/*
 * One serving process: the app on its HTTP server, on a database that src/main.ts has already
 * migrated (and seeded). Either a worker under the supervisor (src/supervisor.ts), which stops it
 * with a message, or, with WORKERS=0, the only process, which SIGTERM/SIGINT stop. Stopping is
 * graceful either way: no new connections, in-flight requests finish, then its services (made by
 * src/compose.ts) close.
 */

/** In-flight requests get this long to finish after a stop before their connections are cut. */
const SHUTDOWN_GRACE_MS = 10_000;

/** A port this process cannot listen on, said as the operator fixes it. */
function portProblem(error: NodeJS.ErrnoException, port: number): Error {
  if (error.code === 'EADDRINUSE') return new StartFailure(`port ${port} is already in use; set PORT`);
  if (error.code === 'EACCES')
    return new StartFailure(`port ${port} needs privileges this process does not have; set PORT`);
  return error;
}

function listen(server: Server, port: number): Promise<void> {
  return new Promise((resolve, reject) => {
    const onError = (error: NodeJS.ErrnoException) => reject(portProblem(error, port));
    server.once('error', onError);
    server.listen(port, () => {
      server.off('error', onError);
      resolve();
    });
  });
}

/** True while this worker's IPC channel to the supervisor is open. */
const supervised = (): boolean => cluster.isWorker && process.connected;

function tellSupervisor(message: RestartMessage): Promise<boolean> {
  return new Promise((resolve) => {
    if (!supervised()) {
      resolve(false);
      return;
    }
    process.send?.(message, undefined, {}, (error: Error | null) => resolve(error === null));
  });
}

/** Takes, keeps or gives back the cluster-wide roll lease for the supervisor (src/supervisor.ts). */
async function actOnRollLease(
  state: SharedState,
  { op, token, ttlMs }: RollLeaseRequest,
): Promise<RollLeaseOutcome> {
  try {
    if (op === 'keep')
      return (await state.replaceValue(ROLL_LEASE_KEY, token, token, ttlMs)) ? 'held' : 'busy';
    if (op === 'give') return (await state.deleteValue(ROLL_LEASE_KEY, token)) ? 'held' : 'busy';
    if (await state.putValue(ROLL_LEASE_KEY, token, ttlMs)) return 'held';
    // A take whose answer was lost and is asked again finds its own token there.
    return (await state.getValue(ROLL_LEASE_KEY)) === token ? 'held' : 'busy';
  } catch {
    return 'unavailable';
  }
}

/**
 * restartSystem's capability in a worker: the request goes to this node's supervisor over IPC (so
 * the answer is true only when it got there), then to the other nodes through the shared state;
 * every worker forwards what it hears there to its own supervisor, which counts each id once.
 * A worker being replaced is already cut off from its supervisor: a request it was still parsing
 * when the roll reached it answers false (nothing new reaches such a worker after that).
 */
async function restartCapability(state: SharedState): Promise<RestartWorkers> {
  await state.subscribe(RESTART_CHANNEL, (id) => {
    if (!RESTART_ID.test(id)) return;
    void tellSupervisor({ cms: 'restart', id });
  });
  process.on('message', (message: unknown) => {
    if (!isRollLeaseRequest(message)) return;
    void actOnRollLease(state, message).then((outcome) => {
      const answer: RollLeaseAnswer = { cms: 'rollLeaseAnswer', seq: message.seq, outcome };
      if (supervised()) process.send?.(answer);
    });
  });
  return async () => {
    const id = randomUUID();
    if (!(await tellSupervisor({ cms: 'restart', id }))) return false;
    await state.broadcast(RESTART_CHANNEL, id);
    return true;
  };
}

export async function serve(config: Config, logger: Logger): Promise<void> {
  const underSupervisor = cluster.isWorker;
  // The supervisor may ask a worker to stop while it is still starting (it is being stopped
  // itself): the request is kept and honoured as soon as there is a server to close.
  let stop = (_reason: string) => {
    stopRequested = true;
  };
  let stopRequested = false;
  if (underSupervisor) {
    process.on('message', (message: unknown) => {
      if (isStopMessage(message)) stop('stop');
    });
    // Ctrl-C reaches the whole process group; the supervisor decides when its workers stop.
    process.on('SIGINT', () => undefined);
    process.on('SIGTERM', () => stop('SIGTERM'));
  }
  const services = await composeServices(config, logger, {
    supervised: underSupervisor,
    // A worker that replaces another starts while Redis is down, as the node it joins serves then
    // (src/state/failPolicy.ts); a node's first workers do not.
    redisFailOpen: underSupervisor && process.env[REPLACEMENT_WORKER_ENV] === '1',
    ...(underSupervisor && { restart: restartCapability }),
  });
  const app = createApp(services);
  const server = createHttpServer(app);
  let stopping = false;
  await listen(server, config.port);
  logger.info({ port: config.port, provider: services.provider }, 'listening');
  // Webhook delivery runs beside the requests in every serving process (docs/api/events.md); it
  // stops before the services close, after in-flight requests have finished.
  const deliveries = new DeliveryWorker({
    db: services.db,
    provider: services.provider,
    policy: new OutboundPolicy(config.events.allowedAddresses),
    timeoutMs: config.events.webhookTimeoutMs,
    retentionDays: config.events.retentionDays,
    owner: `${hostname()}:${process.pid}:${randomUUID()}`,
    ...(services.metrics && { hooks: services.metrics.webhookHooks }),
    onError: (error) => logger.error({ err: describeError(error) }, 'webhook delivery failed'),
  });
  deliveries.start();
  services.metrics?.observeWebhookQueue(() => queueState(services.db));

  async function shutdown(reason: string): Promise<void> {
    if (stopping) {
      // Under the supervisor a second request to stop changes nothing; alone, it means "now".
      if (underSupervisor) return;
      logger.warn({ signal: reason }, 'second signal: exiting now');
      process.exit(1);
    }
    stopping = true;
    // The port is closed before the line says so: a client that reads it and connects is refused
    // (logged first, a connection made in between sat in the backlog and was reset on close).
    // Keep-alive connections drain: see drainServer.
    const drained = drainServer(server, SHUTDOWN_GRACE_MS, () =>
      logger.warn(`requests still running after ${SHUTDOWN_GRACE_MS} ms; closing their connections`),
    );
    logger.info({ signal: reason }, 'shutting down: no new connections, finishing in-flight requests');
    await drained;
    await deliveries.stop();
    await services.close();
    logger.info('stopped');
    process.exit(0);
  }
  stop = (reason: string) => {
    shutdown(reason).catch((error: unknown) => {
      logger.error({ err: describeError(error) }, 'shutdown failed');
      process.exit(1);
    });
  };
  if (!underSupervisor) {
    for (const signal of ['SIGTERM', 'SIGINT'] as const) process.on(signal, () => stop(signal));
  }
  if (stopRequested) stop('stop');
}

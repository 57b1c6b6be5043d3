import type { Redis } from 'ioredis';
import type { CounterState, SharedState, SignalListener, Unsubscribe } from './port.ts';

/*
 * The shared state in Redis, for several nodes (REDIS_URL). Every key and channel carries the
 * deployment's REDIS_KEY_PREFIX, so that deployments (and test runs) can share one Redis. Each
 * operation is one atomic command or script, so concurrent nodes never lose a count. Signals are
 * Redis PUBLISH/SUBSCRIBE on a second connection (a subscribed connection can do nothing else),
 * opened on the first subscription; ioredis subscribes again by itself after a reconnect.
 */

/*
 * A counter's window end is Redis's own instant (TIME plus PTTL, read in the same script), never this
 * node's clock at the reply plus the PTTL: that moved with every reply's delay, so two counters set
 * in order could read as the other way round (a lock set just after an unlock seemed lifted by it).
 */

/** INCR, and start the window on the first hit (or on a counter that somehow lost its expiry). */
const INCREMENT = `
local count = redis.call('INCR', KEYS[1])
local ttl = redis.call('PTTL', KEYS[1])
if count == 1 or ttl < 0 then
  redis.call('PEXPIRE', KEYS[1], ARGV[1])
  ttl = tonumber(ARGV[1])
end
local now = redis.call('TIME')
return {count, ttl, now[1], now[2]}`;

/** GET a live counter with its window end as INCREMENT answers it; nothing for an absent one. */
const GET = `
local value = redis.call('GET', KEYS[1])
local ttl = redis.call('PTTL', KEYS[1])
if not value or ttl < 0 then return false end
local now = redis.call('TIME')
return {value, ttl, now[1], now[2]}`;

/** What INCREMENT and GET answer: the count (a number, or GET's string), the PTTL and TIME's two parts. */
type CounterReply = [count: number | string, ttl: number, seconds: string, micros: string];

/** The counter's state, its window end TIME (seconds, microseconds) plus the PTTL, in Redis's clock. */
const counterState = ([count, ttl, seconds, micros]: CounterReply): CounterState => ({
  count: Number(count),
  resetAt: new Date(Number(seconds) * 1000 + Math.floor(Number(micros) / 1000) + ttl),
});

/** DECR an existing counter, never below 0 and never creating one without an expiry. */
const DECREMENT = `
if redis.call('GET', KEYS[1]) and tonumber(redis.call('GET', KEYS[1])) > 0 then
  return redis.call('DECR', KEYS[1])
end
return 0`;

/** SET a live value to ARGV[2] for ARGV[3] ms while it is still ARGV[1]. */
const REPLACE_VALUE = `
if redis.call('GET', KEYS[1]) == ARGV[1] then
  redis.call('SET', KEYS[1], ARGV[2], 'PX', ARGV[3])
  return 1
end
return 0`;

/** DEL a value while it is still ARGV[1]. */
const DELETE_VALUE = `
if redis.call('GET', KEYS[1]) == ARGV[1] then
  return redis.call('DEL', KEYS[1])
end
return 0`;

/** One script of one key, called with its key and arguments. */
type Script = (key: string, ...args: (string | number)[]) => Promise<unknown>;

/**
 * A script defined on the connection (ioredis's defineCommand): sent whole the first time on a
 * connection (EVAL, which loads it), by its SHA-1 after that (EVALSHA), and whole again when Redis
 * answers NOSCRIPT (after a restart or SCRIPT FLUSH), which ioredis does by itself. EVAL on every
 * call sent the script's text each time, and Redis hashed it again each time.
 */
function script(redis: Redis, name: string, lua: string): Script {
  redis.defineCommand(name, { numberOfKeys: 1, lua });
  // defineCommand adds the method under that name; its type cannot say so.
  const command = (redis as unknown as Record<string, Script>)[name] as Script;
  return (key, ...args) => command.call(redis, key, ...args);
}

export class RedisSharedState implements SharedState {
  readonly kind = 'redis';
  private subscriber: Redis | undefined;
  private readonly listeners = new Map<string, Set<SignalListener>>();
  private readonly scripts: Record<
    'increment' | 'get' | 'decrement' | 'replaceValue' | 'deleteValue',
    Script
  >;

  constructor(
    private readonly redis: Redis,
    private readonly prefix: string,
  ) {
    this.scripts = {
      increment: script(redis, 'cmsIncrement', INCREMENT),
      get: script(redis, 'cmsGet', GET),
      decrement: script(redis, 'cmsDecrement', DECREMENT),
      replaceValue: script(redis, 'cmsReplaceValue', REPLACE_VALUE),
      deleteValue: script(redis, 'cmsDeleteValue', DELETE_VALUE),
    };
  }

  private key(key: string): string {
    return `${this.prefix}${key}`;
  }

  async increment(key: string, windowMs: number): Promise<CounterState> {
    return counterState((await this.scripts.increment(this.key(key), windowMs)) as CounterReply);
  }

  async get(key: string): Promise<CounterState | undefined> {
    const reply = (await this.scripts.get(this.key(key))) as CounterReply | null;
    return reply === null ? undefined : counterState(reply);
  }

  async decrement(key: string): Promise<void> {
    await this.scripts.decrement(this.key(key));
  }

  async reset(key: string): Promise<void> {
    await this.redis.del(this.key(key));
  }

  async mark(key: string, ttlMs: number): Promise<boolean> {
    return (await this.redis.set(this.key(key), '1', 'PX', ttlMs, 'NX')) === 'OK';
  }

  async putValue(key: string, value: string, ttlMs: number): Promise<boolean> {
    return (await this.redis.set(this.key(key), value, 'PX', ttlMs, 'NX')) === 'OK';
  }

  async getValue(key: string): Promise<string | undefined> {
    return (await this.redis.get(this.key(key))) ?? undefined;
  }

  async replaceValue(key: string, expected: string, value: string, ttlMs: number): Promise<boolean> {
    return (await this.scripts.replaceValue(this.key(key), expected, value, ttlMs)) === 1;
  }

  async deleteValue(key: string, expected: string): Promise<boolean> {
    return (await this.scripts.deleteValue(this.key(key), expected)) === 1;
  }

  async broadcast(channel: string, message: string): Promise<void> {
    await this.redis.publish(this.key(channel), message);
  }

  async subscribe(channel: string, listener: SignalListener): Promise<Unsubscribe> {
    const subscriber = this.subscriberConnection();
    const name = this.key(channel);
    let listeners = this.listeners.get(name);
    if (listeners === undefined) {
      listeners = new Set();
      this.listeners.set(name, listeners);
      // A SUBSCRIBE that fails (Redis down) keeps the listener: it is sent again whenever the
      // connection is ready (see subscriberConnection).
      await subscriber.subscribe(name);
    }
    listeners.add(listener);
    return async () => {
      const current = this.listeners.get(name);
      if (current === undefined || !current.delete(listener) || current.size > 0) return;
      this.listeners.delete(name);
      await subscriber.unsubscribe(name);
    };
  }

  private subscriberConnection(): Redis {
    if (this.subscriber === undefined) {
      const subscriber = this.redis.duplicate();
      subscriber.on('message', (channel: string, message: string) => {
        for (const listener of this.listeners.get(channel) ?? []) listener(message);
      });
      // Connection errors surface through the commands; without a listener ioredis prints them.
      subscriber.on('error', () => {});
      // ioredis subscribes again by itself only to channels a SUBSCRIBE succeeded for; one that
      // failed while Redis was down is sent here once it is back (again is harmless).
      subscriber.on('ready', () => {
        const names = [...this.listeners.keys()];
        if (names.length > 0) subscriber.subscribe(...names).catch(() => undefined);
      });
      this.subscriber = subscriber;
    }
    return this.subscriber;
  }

  onConnectionChange(listener: (connected: boolean) => void): void {
    this.redis.on('close', () => listener(false));
    this.redis.on('ready', () => listener(true));
  }

  async ping(): Promise<void> {
    await this.redis.ping();
  }

  async close(): Promise<void> {
    this.listeners.clear();
    const subscriber = this.subscriber;
    this.subscriber = undefined;
    if (subscriber !== undefined) subscriber.disconnect();
  }
}

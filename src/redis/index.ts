// `@animal-store/sdk/redis`: the quota store shared through Redis. It loads
// no Redis client itself: pass the one your application already has.

export type {
  IORedisClient,
  NodeRedisClient,
  RedisClient,
  RedisScripts,
} from './clients.js';
export { RedisQuotaStore, type RedisQuotaStoreOptions } from './RedisQuotaStore.js';

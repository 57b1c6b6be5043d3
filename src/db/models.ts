/** Row types of the model, shared by both providers (the SQLite client's types stand for both). */
export type {
  Administrator,
  ApiKey,
  Channel,
  Content,
  ContentCheck,
  Site,
  SystemSetting,
  User,
} from '../generated/prisma/sqlite/client.ts';

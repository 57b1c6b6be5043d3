import { contract } from '../contract.ts';
import { createAdministrator } from './administrators/createAdministrator.ts';
import { deleteAdministrator } from './administrators/deleteAdministrator.ts';
import { getAdministrator } from './administrators/getAdministrator.ts';
import { listAdministrators } from './administrators/listAdministrators.ts';
import { loginAdministrator } from './administrators/loginAdministrator.ts';
import { logoutAdministrator } from './administrators/logoutAdministrator.ts';
import { resetAdministratorPassword } from './administrators/resetAdministratorPassword.ts';
import { updateAdministrator } from './administrators/updateAdministrator.ts';
import { createApiKey } from './apiKeys/createApiKey.ts';
import { deleteApiKey } from './apiKeys/deleteApiKey.ts';
import { listApiKeys } from './apiKeys/listApiKeys.ts';
import { resetApiKey } from './apiKeys/resetApiKey.ts';
import { updateApiKey } from './apiKeys/updateApiKey.ts';
import { checkCaptcha } from './captcha/checkCaptcha.ts';
import { getCaptcha } from './captcha/getCaptcha.ts';
import { createChannel } from './channels/createChannel.ts';
import { deleteChannel } from './channels/deleteChannel.ts';
import { getChannel } from './channels/getChannel.ts';
import { listChannels } from './channels/listChannels.ts';
import { updateChannel } from './channels/updateChannel.ts';
import { checkContents } from './contents/checkContents.ts';
import { createContent } from './contents/createContent.ts';
import { deleteContent } from './contents/deleteContent.ts';
import { getContent } from './contents/getContent.ts';
import { listContentChecks } from './contents/listContentChecks.ts';
import { listContents } from './contents/listContents.ts';
import { listRecycledContents } from './contents/listRecycledContents.ts';
import { restoreContent } from './contents/restoreContent.ts';
import { updateContent } from './contents/updateContent.ts';
import { createWebhook } from './events/createWebhook.ts';
import { deleteWebhook } from './events/deleteWebhook.ts';
import { getWebhook } from './events/getWebhook.ts';
import { listActivity } from './events/listActivity.ts';
import { listWebhookDeliveries } from './events/listWebhookDeliveries.ts';
import { listWebhooks } from './events/listWebhooks.ts';
import { redeliverWebhook } from './events/redeliverWebhook.ts';
import { rotateWebhookSecret } from './events/rotateWebhookSecret.ts';
import { testWebhook } from './events/testWebhook.ts';
import { updateWebhook } from './events/updateWebhook.ts';
import { stlCountHits } from './stl/stlCountHits.ts';
import { stlGetChannel } from './stl/stlGetChannel.ts';
import { stlGetContent } from './stl/stlGetContent.ts';
import { stlGetSite } from './stl/stlGetSite.ts';
import { stlListChannels } from './stl/stlListChannels.ts';
import { stlListContents } from './stl/stlListContents.ts';
import { stlListSites } from './stl/stlListSites.ts';
import { stlSqlContent } from './stl/stlSqlContent.ts';
import { stlSqlContents } from './stl/stlSqlContents.ts';
import { clearCache } from './system/clearCache.ts';
import { healthz } from './system/healthz.ts';
import { ping } from './system/ping.ts';
import { readyz } from './system/readyz.ts';
import { restartSystem } from './system/restartSystem.ts';
import type { Handler, OperationId } from './types.ts';
import { createUser } from './users/createUser.ts';
import { deleteUser } from './users/deleteUser.ts';
import { getUser } from './users/getUser.ts';
import { getUserAvatar } from './users/getUserAvatar.ts';
import { listUsers } from './users/listUsers.ts';
import { loginUser } from './users/loginUser.ts';
import { logoutUser } from './users/logoutUser.ts';
import { resetUserPassword } from './users/resetUserPassword.ts';
import { updateUser } from './users/updateUser.ts';
import { uploadUserAvatar } from './users/uploadUserAvatar.ts';

/*
 * Every implemented operation, one line each, grouped by the contract's tags. The mapped type ties
 * each key to the handler type of that very operation, so a handler registered under the wrong
 * operationId, or drifting from the contract, does not compile.
 */

export type Registry = { [K in OperationId]?: Handler<K> };

export const handlers: Registry = {
  // events
  listActivity,
  createWebhook,
  deleteWebhook,
  getWebhook,
  listWebhookDeliveries,
  listWebhooks,
  redeliverWebhook,
  rotateWebhookSecret,
  testWebhook,
  updateWebhook,
  // contents
  listContents,
  getContent,
  updateContent,
  deleteContent,
  createContent,
  checkContents,
  listContentChecks,
  restoreContent,
  listRecycledContents,
  // channels
  listChannels,
  getChannel,
  updateChannel,
  createChannel,
  deleteChannel,
  // stl (template-tag reads)
  stlListSites,
  stlGetSite,
  stlGetChannel,
  stlListChannels,
  stlListContents,
  stlGetContent,
  stlSqlContents,
  stlSqlContent,
  stlCountHits,
  // apiKeys
  listApiKeys,
  createApiKey,
  updateApiKey,
  deleteApiKey,
  resetApiKey,
  // users
  getUserAvatar,
  uploadUserAvatar,
  // captcha
  getCaptcha,
  checkCaptcha,
  // users
  listUsers,
  createUser,
  getUser,
  updateUser,
  deleteUser,
  loginUser,
  logoutUser,
  resetUserPassword,
  // administrators
  listAdministrators,
  createAdministrator,
  getAdministrator,
  updateAdministrator,
  deleteAdministrator,
  resetAdministratorPassword,
  loginAdministrator,
  logoutAdministrator,
  // system
  ping,
  healthz,
  readyz,
  restartSystem,
  clearCache,
};

/** operationIds of the contract that no handler implements yet (their requests get a 404 problem). */
export function missingOperationIds(registry: Registry = handlers): string[] {
  return contract.operations.map((operation) => operation.operationId).filter((id) => !(id in registry));
}

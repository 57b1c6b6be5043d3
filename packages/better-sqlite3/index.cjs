'use strict';
/*
 * `better-sqlite3` for every importer in this project, Prisma's adapter included (package.json
 * `overrides`): the release driver.cjs picks for the running Node.js.
 */
const driver = require('./driver.cjs');

try {
  module.exports = require(driver);
} catch (error) {
  // 13.x is an optional dependency that npm skips on a Node.js older than it supports; a
  // node_modules installed by such a Node lacks it.
  if (error && error.code === 'MODULE_NOT_FOUND' && String(error.message).includes(`'${driver}'`)) {
    throw new Error(
      `${driver} is not installed, and Node.js ${process.version} needs it: run npm ci with this Node.js`,
      { cause: error },
    );
  }
  throw error;
}

'use strict';
/*
 * The one choice of better-sqlite3 release, by the Node-API version of the running Node.js.
 * 13.x's prebuilt binaries are built for Node-API 10 (Node.js 22.14 and later) and crash on an older
 * Node; 12.x, compiled here by `prepare` (scripts/sqlite.ts), aborts on Node.js 24 when the garbage
 * collector frees a statement (WiseLibs/better-sqlite3#1515, fixed only in 13.x).
 */
module.exports = Number(process.versions.napi) >= 10 ? 'better-sqlite3-13' : 'better-sqlite3-12';

/** The package name of the better-sqlite3 release the running Node.js loads. */
declare const driver: 'better-sqlite3-12' | 'better-sqlite3-13';
export = driver;

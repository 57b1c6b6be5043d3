-- RedefineTables
PRAGMA defer_foreign_keys=ON;
PRAGMA foreign_keys=OFF;
CREATE TABLE "new_Administrator" (
    "id" INTEGER NOT NULL PRIMARY KEY AUTOINCREMENT,
    "userName" TEXT NOT NULL,
    "displayName" TEXT NOT NULL DEFAULT '',
    "email" TEXT,
    "mobile" TEXT,
    "creatorUserName" TEXT NOT NULL DEFAULT '',
    "passwordHash" TEXT NOT NULL,
    "passwordSalt" TEXT NOT NULL,
    "creationDate" DATETIME NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "lastActivityDate" DATETIME NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "countOfLogin" INTEGER NOT NULL DEFAULT 0,
    "countOfFailedLogin" INTEGER NOT NULL DEFAULT 0,
    "lockedUntil" DATETIME,
    "isLockedOut" BOOLEAN NOT NULL DEFAULT false,
    "tokenVersion" INTEGER NOT NULL DEFAULT 0,
    "siteId" INTEGER NOT NULL DEFAULT 0,
    "departmentId" INTEGER NOT NULL DEFAULT 0,
    "areaId" INTEGER NOT NULL DEFAULT 0,
    "siteIdCollection" TEXT NOT NULL DEFAULT ''
);
INSERT INTO "new_Administrator" ("areaId", "countOfFailedLogin", "countOfLogin", "creationDate", "creatorUserName", "departmentId", "displayName", "email", "id", "isLockedOut", "lastActivityDate", "lockedUntil", "mobile", "passwordHash", "passwordSalt", "siteId", "siteIdCollection", "userName") SELECT "areaId", "countOfFailedLogin", "countOfLogin", "creationDate", "creatorUserName", "departmentId", "displayName", "email", "id", "isLockedOut", "lastActivityDate", "lockedUntil", "mobile", "passwordHash", "passwordSalt", "siteId", "siteIdCollection", "userName" FROM "Administrator";
DROP TABLE "Administrator";
ALTER TABLE "new_Administrator" RENAME TO "Administrator";
CREATE UNIQUE INDEX "Administrator_userName_key" ON "Administrator"("userName");
CREATE UNIQUE INDEX "Administrator_email_key" ON "Administrator"("email");
CREATE UNIQUE INDEX "Administrator_mobile_key" ON "Administrator"("mobile");
CREATE TABLE "new_User" (
    "id" INTEGER NOT NULL PRIMARY KEY AUTOINCREMENT,
    "userName" TEXT NOT NULL,
    "displayName" TEXT NOT NULL DEFAULT '',
    "email" TEXT,
    "mobile" TEXT,
    "openId" TEXT,
    "avatarUrl" TEXT NOT NULL DEFAULT '',
    "passwordHash" TEXT NOT NULL,
    "passwordSalt" TEXT NOT NULL,
    "groupId" INTEGER NOT NULL DEFAULT 0,
    "createDate" DATETIME NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "lastResetPasswordDate" DATETIME NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "lastActivityDate" DATETIME NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "countOfLogin" INTEGER NOT NULL DEFAULT 0,
    "countOfFailedLogin" INTEGER NOT NULL DEFAULT 0,
    "countOfWriting" INTEGER NOT NULL DEFAULT 0,
    "lockedUntil" DATETIME,
    "checked" BOOLEAN NOT NULL DEFAULT true,
    "locked" BOOLEAN NOT NULL DEFAULT false,
    "tokenVersion" INTEGER NOT NULL DEFAULT 0
);
INSERT INTO "new_User" ("avatarUrl", "checked", "countOfFailedLogin", "countOfLogin", "countOfWriting", "createDate", "displayName", "email", "groupId", "id", "lastActivityDate", "lastResetPasswordDate", "locked", "lockedUntil", "mobile", "openId", "passwordHash", "passwordSalt", "userName") SELECT "avatarUrl", "checked", "countOfFailedLogin", "countOfLogin", "countOfWriting", "createDate", "displayName", "email", "groupId", "id", "lastActivityDate", "lastResetPasswordDate", "locked", "lockedUntil", "mobile", "openId", "passwordHash", "passwordSalt", "userName" FROM "User";
DROP TABLE "User";
ALTER TABLE "new_User" RENAME TO "User";
CREATE UNIQUE INDEX "User_userName_key" ON "User"("userName");
CREATE UNIQUE INDEX "User_email_key" ON "User"("email");
CREATE UNIQUE INDEX "User_mobile_key" ON "User"("mobile");
CREATE UNIQUE INDEX "User_openId_key" ON "User"("openId");
PRAGMA foreign_keys=ON;
PRAGMA defer_foreign_keys=OFF;

-- CreateTable
CREATE TABLE "Site" (
    "id" INTEGER NOT NULL PRIMARY KEY AUTOINCREMENT,
    "siteDir" TEXT NOT NULL,
    "siteName" TEXT NOT NULL,
    "tableName" TEXT NOT NULL DEFAULT 'siteserver_Content',
    "isRoot" BOOLEAN NOT NULL DEFAULT false,
    "parentId" INTEGER NOT NULL DEFAULT 0,
    "taxis" INTEGER NOT NULL DEFAULT 0,
    "attributes" TEXT NOT NULL DEFAULT '{}'
);

-- CreateTable
CREATE TABLE "Channel" (
    "id" INTEGER NOT NULL PRIMARY KEY AUTOINCREMENT,
    "guid" TEXT NOT NULL,
    "siteId" INTEGER NOT NULL,
    "parentId" INTEGER NOT NULL DEFAULT 0,
    "channelName" TEXT NOT NULL,
    "indexName" TEXT,
    "parentsPath" TEXT NOT NULL DEFAULT '',
    "parentsCount" INTEGER NOT NULL DEFAULT 0,
    "childrenCount" INTEGER NOT NULL DEFAULT 0,
    "groupNames" TEXT NOT NULL DEFAULT '',
    "taxis" INTEGER NOT NULL DEFAULT 0,
    "addDate" DATETIME NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "createdDate" DATETIME NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "lastModifiedDate" DATETIME NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "imageUrl" TEXT NOT NULL DEFAULT '',
    "content" TEXT NOT NULL DEFAULT '',
    "filePath" TEXT NOT NULL DEFAULT '',
    "channelFilePathRule" TEXT NOT NULL DEFAULT '',
    "contentFilePathRule" TEXT NOT NULL DEFAULT '',
    "linkUrl" TEXT NOT NULL DEFAULT '',
    "linkType" TEXT NOT NULL DEFAULT 'None',
    "channelTemplateId" INTEGER NOT NULL DEFAULT 0,
    "contentTemplateId" INTEGER NOT NULL DEFAULT 0,
    "keywords" TEXT NOT NULL DEFAULT '',
    "description" TEXT NOT NULL DEFAULT '',
    "contentModelPluginId" TEXT NOT NULL DEFAULT '',
    "contentRelatedPluginIds" TEXT NOT NULL DEFAULT '',
    "listColumns" TEXT,
    "isCreateChannelIfContentChanged" BOOLEAN NOT NULL DEFAULT true,
    "createChannelIdsIfContentChanged" TEXT,
    "defaultTaxisType" TEXT NOT NULL DEFAULT 'OrderByTaxisDesc',
    "extras" TEXT NOT NULL DEFAULT '{}',
    CONSTRAINT "Channel_siteId_fkey" FOREIGN KEY ("siteId") REFERENCES "Site" ("id") ON DELETE CASCADE ON UPDATE CASCADE
);

-- CreateTable
CREATE TABLE "Content" (
    "id" INTEGER NOT NULL PRIMARY KEY AUTOINCREMENT,
    "guid" TEXT NOT NULL,
    "siteId" INTEGER NOT NULL,
    "channelId" INTEGER NOT NULL,
    "adminId" INTEGER NOT NULL DEFAULT 0,
    "lastEditAdminId" INTEGER NOT NULL DEFAULT 0,
    "userId" INTEGER NOT NULL DEFAULT 0,
    "taxis" INTEGER NOT NULL DEFAULT 0,
    "groupNames" TEXT NOT NULL DEFAULT '',
    "tagNames" TEXT NOT NULL DEFAULT '',
    "sourceId" INTEGER NOT NULL DEFAULT 0,
    "referenceId" INTEGER NOT NULL DEFAULT 0,
    "templateId" INTEGER NOT NULL DEFAULT 0,
    "checked" BOOLEAN NOT NULL DEFAULT false,
    "checkedLevel" INTEGER NOT NULL DEFAULT 0,
    "hits" INTEGER NOT NULL DEFAULT 0,
    "hitsByDay" INTEGER NOT NULL DEFAULT 0,
    "hitsByWeek" INTEGER NOT NULL DEFAULT 0,
    "hitsByMonth" INTEGER NOT NULL DEFAULT 0,
    "lastHitsDate" DATETIME,
    "downloads" INTEGER NOT NULL DEFAULT 0,
    "imageUrlCount" INTEGER NOT NULL DEFAULT 0,
    "videoUrlCount" INTEGER NOT NULL DEFAULT 0,
    "fileUrlCount" INTEGER NOT NULL DEFAULT 0,
    "title" TEXT NOT NULL DEFAULT '',
    "subTitle" TEXT NOT NULL DEFAULT '',
    "imageUrl" TEXT NOT NULL DEFAULT '',
    "videoUrl" TEXT NOT NULL DEFAULT '',
    "fileUrl" TEXT NOT NULL DEFAULT '',
    "body" TEXT NOT NULL DEFAULT '',
    "summary" TEXT NOT NULL DEFAULT '',
    "author" TEXT NOT NULL DEFAULT '',
    "source" TEXT NOT NULL DEFAULT '',
    "top" BOOLEAN NOT NULL DEFAULT false,
    "recommend" BOOLEAN NOT NULL DEFAULT false,
    "hot" BOOLEAN NOT NULL DEFAULT false,
    "color" BOOLEAN NOT NULL DEFAULT false,
    "linkType" TEXT NOT NULL DEFAULT 'None',
    "linkUrl" TEXT,
    "addUserName" TEXT NOT NULL DEFAULT '',
    "lastEditUserName" TEXT NOT NULL DEFAULT '',
    "writingUserName" TEXT NOT NULL DEFAULT '',
    "addDate" DATETIME NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "createdDate" DATETIME NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "lastModifiedDate" DATETIME NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "lastEditDate" DATETIME NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "settings" TEXT NOT NULL DEFAULT '{}',
    "recycled" BOOLEAN NOT NULL DEFAULT false,
    "recycledDate" DATETIME,
    CONSTRAINT "Content_siteId_fkey" FOREIGN KEY ("siteId") REFERENCES "Site" ("id") ON DELETE CASCADE ON UPDATE CASCADE
);

-- CreateTable
CREATE TABLE "User" (
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
    "locked" BOOLEAN NOT NULL DEFAULT false
);

-- CreateTable
CREATE TABLE "Administrator" (
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
    "siteId" INTEGER NOT NULL DEFAULT 0,
    "departmentId" INTEGER NOT NULL DEFAULT 0,
    "areaId" INTEGER NOT NULL DEFAULT 0,
    "siteIdCollection" TEXT NOT NULL DEFAULT ''
);

-- CreateTable
CREATE TABLE "ApiKey" (
    "id" INTEGER NOT NULL PRIMARY KEY AUTOINCREMENT,
    "title" TEXT NOT NULL,
    "digest" TEXT NOT NULL,
    "scopes" TEXT NOT NULL,
    "createdAt" DATETIME NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "lastUsedAt" DATETIME,
    "expiresAt" DATETIME,
    "revokedAt" DATETIME
);

-- CreateTable
CREATE TABLE "SystemSetting" (
    "key" TEXT NOT NULL PRIMARY KEY,
    "value" TEXT NOT NULL
);

-- CreateIndex
CREATE UNIQUE INDEX "Site_siteDir_key" ON "Site"("siteDir");

-- CreateIndex
CREATE INDEX "Site_taxis_id_idx" ON "Site"("taxis", "id");

-- CreateIndex
CREATE UNIQUE INDEX "Channel_guid_key" ON "Channel"("guid");

-- CreateIndex
CREATE INDEX "Channel_siteId_parentId_taxis_id_idx" ON "Channel"("siteId", "parentId", "taxis", "id");

-- CreateIndex
CREATE INDEX "Channel_siteId_channelName_idx" ON "Channel"("siteId", "channelName");

-- CreateIndex
CREATE UNIQUE INDEX "Channel_siteId_indexName_key" ON "Channel"("siteId", "indexName");

-- CreateIndex
CREATE UNIQUE INDEX "Content_guid_key" ON "Content"("guid");

-- CreateIndex
CREATE INDEX "Content_siteId_recycled_top_channelId_taxis_id_idx" ON "Content"("siteId", "recycled", "top", "channelId", "taxis", "id");

-- CreateIndex
CREATE INDEX "Content_channelId_recycled_checked_taxis_id_idx" ON "Content"("channelId", "recycled", "checked", "taxis", "id");

-- CreateIndex
CREATE INDEX "Content_siteId_recycled_checked_addDate_idx" ON "Content"("siteId", "recycled", "checked", "addDate");

-- CreateIndex
CREATE INDEX "Content_siteId_recycled_lastModifiedDate_idx" ON "Content"("siteId", "recycled", "lastModifiedDate");

-- CreateIndex
CREATE UNIQUE INDEX "User_userName_key" ON "User"("userName");

-- CreateIndex
CREATE UNIQUE INDEX "User_email_key" ON "User"("email");

-- CreateIndex
CREATE UNIQUE INDEX "User_mobile_key" ON "User"("mobile");

-- CreateIndex
CREATE UNIQUE INDEX "User_openId_key" ON "User"("openId");

-- CreateIndex
CREATE UNIQUE INDEX "Administrator_userName_key" ON "Administrator"("userName");

-- CreateIndex
CREATE UNIQUE INDEX "Administrator_email_key" ON "Administrator"("email");

-- CreateIndex
CREATE UNIQUE INDEX "Administrator_mobile_key" ON "Administrator"("mobile");

-- CreateIndex
CREATE UNIQUE INDEX "ApiKey_digest_key" ON "ApiKey"("digest");

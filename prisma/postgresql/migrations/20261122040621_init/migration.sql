-- CreateTable
CREATE TABLE "Site" (
    "id" SERIAL NOT NULL,
    "siteDir" TEXT NOT NULL,
    "siteName" TEXT NOT NULL,
    "tableName" TEXT NOT NULL DEFAULT 'siteserver_Content',
    "isRoot" BOOLEAN NOT NULL DEFAULT false,
    "parentId" INTEGER NOT NULL DEFAULT 0,
    "taxis" INTEGER NOT NULL DEFAULT 0,
    "attributes" TEXT NOT NULL DEFAULT '{}',

    CONSTRAINT "Site_pkey" PRIMARY KEY ("id")
);

-- CreateTable
CREATE TABLE "Channel" (
    "id" SERIAL NOT NULL,
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
    "addDate" TIMESTAMP(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "createdDate" TIMESTAMP(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "lastModifiedDate" TIMESTAMP(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
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

    CONSTRAINT "Channel_pkey" PRIMARY KEY ("id")
);

-- CreateTable
CREATE TABLE "Content" (
    "id" SERIAL NOT NULL,
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
    "lastHitsDate" TIMESTAMP(3),
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
    "addDate" TIMESTAMP(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "createdDate" TIMESTAMP(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "lastModifiedDate" TIMESTAMP(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "lastEditDate" TIMESTAMP(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "settings" TEXT NOT NULL DEFAULT '{}',
    "recycled" BOOLEAN NOT NULL DEFAULT false,
    "recycledDate" TIMESTAMP(3),

    CONSTRAINT "Content_pkey" PRIMARY KEY ("id")
);

-- CreateTable
CREATE TABLE "User" (
    "id" SERIAL NOT NULL,
    "userName" TEXT NOT NULL,
    "displayName" TEXT NOT NULL DEFAULT '',
    "email" TEXT,
    "mobile" TEXT,
    "openId" TEXT,
    "avatarUrl" TEXT NOT NULL DEFAULT '',
    "passwordHash" TEXT NOT NULL,
    "passwordSalt" TEXT NOT NULL,
    "groupId" INTEGER NOT NULL DEFAULT 0,
    "createDate" TIMESTAMP(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "lastResetPasswordDate" TIMESTAMP(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "lastActivityDate" TIMESTAMP(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "countOfLogin" INTEGER NOT NULL DEFAULT 0,
    "countOfFailedLogin" INTEGER NOT NULL DEFAULT 0,
    "countOfWriting" INTEGER NOT NULL DEFAULT 0,
    "lockedUntil" TIMESTAMP(3),
    "checked" BOOLEAN NOT NULL DEFAULT true,
    "locked" BOOLEAN NOT NULL DEFAULT false,

    CONSTRAINT "User_pkey" PRIMARY KEY ("id")
);

-- CreateTable
CREATE TABLE "Administrator" (
    "id" SERIAL NOT NULL,
    "userName" TEXT NOT NULL,
    "displayName" TEXT NOT NULL DEFAULT '',
    "email" TEXT,
    "mobile" TEXT,
    "creatorUserName" TEXT NOT NULL DEFAULT '',
    "passwordHash" TEXT NOT NULL,
    "passwordSalt" TEXT NOT NULL,
    "creationDate" TIMESTAMP(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "lastActivityDate" TIMESTAMP(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "countOfLogin" INTEGER NOT NULL DEFAULT 0,
    "countOfFailedLogin" INTEGER NOT NULL DEFAULT 0,
    "lockedUntil" TIMESTAMP(3),
    "isLockedOut" BOOLEAN NOT NULL DEFAULT false,
    "siteId" INTEGER NOT NULL DEFAULT 0,
    "departmentId" INTEGER NOT NULL DEFAULT 0,
    "areaId" INTEGER NOT NULL DEFAULT 0,
    "siteIdCollection" TEXT NOT NULL DEFAULT '',

    CONSTRAINT "Administrator_pkey" PRIMARY KEY ("id")
);

-- CreateTable
CREATE TABLE "ApiKey" (
    "id" SERIAL NOT NULL,
    "title" TEXT NOT NULL,
    "digest" TEXT NOT NULL,
    "scopes" TEXT NOT NULL,
    "createdAt" TIMESTAMP(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "lastUsedAt" TIMESTAMP(3),
    "expiresAt" TIMESTAMP(3),
    "revokedAt" TIMESTAMP(3),

    CONSTRAINT "ApiKey_pkey" PRIMARY KEY ("id")
);

-- CreateTable
CREATE TABLE "SystemSetting" (
    "key" TEXT NOT NULL,
    "value" TEXT NOT NULL,

    CONSTRAINT "SystemSetting_pkey" PRIMARY KEY ("key")
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

-- AddForeignKey
ALTER TABLE "Channel" ADD CONSTRAINT "Channel_siteId_fkey" FOREIGN KEY ("siteId") REFERENCES "Site"("id") ON DELETE CASCADE ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "Content" ADD CONSTRAINT "Content_siteId_fkey" FOREIGN KEY ("siteId") REFERENCES "Site"("id") ON DELETE CASCADE ON UPDATE CASCADE;

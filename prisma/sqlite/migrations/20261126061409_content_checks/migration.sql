-- CreateTable
CREATE TABLE "ContentCheck" (
    "id" INTEGER NOT NULL PRIMARY KEY AUTOINCREMENT,
    "siteId" INTEGER NOT NULL,
    "channelId" INTEGER NOT NULL,
    "contentId" INTEGER NOT NULL,
    "adminId" INTEGER NOT NULL DEFAULT 0,
    "apiKeyId" INTEGER NOT NULL DEFAULT 0,
    "checked" BOOLEAN NOT NULL,
    "checkedLevel" INTEGER NOT NULL,
    "reasons" TEXT NOT NULL DEFAULT '',
    "checkDate" DATETIME NOT NULL DEFAULT CURRENT_TIMESTAMP
);

-- CreateIndex
CREATE INDEX "ContentCheck_siteId_contentId_id_idx" ON "ContentCheck"("siteId", "contentId", "id");

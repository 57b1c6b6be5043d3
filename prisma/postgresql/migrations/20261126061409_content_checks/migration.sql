-- CreateTable
CREATE TABLE "ContentCheck" (
    "id" SERIAL NOT NULL,
    "siteId" INTEGER NOT NULL,
    "channelId" INTEGER NOT NULL,
    "contentId" INTEGER NOT NULL,
    "adminId" INTEGER NOT NULL DEFAULT 0,
    "apiKeyId" INTEGER NOT NULL DEFAULT 0,
    "checked" BOOLEAN NOT NULL,
    "checkedLevel" INTEGER NOT NULL,
    "reasons" TEXT NOT NULL DEFAULT '',
    "checkDate" TIMESTAMP(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,

    CONSTRAINT "ContentCheck_pkey" PRIMARY KEY ("id")
);

-- CreateIndex
CREATE INDEX "ContentCheck_siteId_contentId_id_idx" ON "ContentCheck"("siteId", "contentId", "id");

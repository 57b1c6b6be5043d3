-- Columns added in place, not by rebuilding the tables (as Prisma proposes): a rebuild would drop
-- whatever triggers or views earlier migrations put on them, and is slower on a large table.
-- AlterTable
ALTER TABLE "Administrator" ADD COLUMN "version" INTEGER NOT NULL DEFAULT 1;

-- AlterTable
ALTER TABLE "ApiKey" ADD COLUMN "version" INTEGER NOT NULL DEFAULT 1;

-- AlterTable
ALTER TABLE "User" ADD COLUMN "version" INTEGER NOT NULL DEFAULT 1;

-- AlterTable
ALTER TABLE "WebhookSubscription" ADD COLUMN "version" INTEGER NOT NULL DEFAULT 1;

-- CreateTable
CREATE TABLE "SharedValue" (
    "key" TEXT NOT NULL PRIMARY KEY,
    "value" TEXT NOT NULL,
    "expiresAt" DATETIME NOT NULL
);

-- CreateIndex
CREATE INDEX "SharedValue_expiresAt_idx" ON "SharedValue"("expiresAt");

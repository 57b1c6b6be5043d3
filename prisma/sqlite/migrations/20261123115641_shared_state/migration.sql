-- CreateTable
CREATE TABLE "SharedCounter" (
    "key" TEXT NOT NULL PRIMARY KEY,
    "count" INTEGER NOT NULL,
    "resetAt" DATETIME NOT NULL
);

-- CreateTable
CREATE TABLE "SharedMark" (
    "key" TEXT NOT NULL PRIMARY KEY,
    "expiresAt" DATETIME NOT NULL
);

-- CreateTable
CREATE TABLE "SharedSignal" (
    "id" INTEGER NOT NULL PRIMARY KEY AUTOINCREMENT,
    "channel" TEXT NOT NULL,
    "message" TEXT NOT NULL,
    "createdAt" DATETIME NOT NULL DEFAULT CURRENT_TIMESTAMP
);

-- CreateIndex
CREATE INDEX "SharedCounter_resetAt_idx" ON "SharedCounter"("resetAt");

-- CreateIndex
CREATE INDEX "SharedMark_expiresAt_idx" ON "SharedMark"("expiresAt");

-- CreateIndex
CREATE INDEX "SharedSignal_createdAt_idx" ON "SharedSignal"("createdAt");

-- CreateTable
CREATE TABLE "SharedCounter" (
    "key" TEXT NOT NULL,
    "count" INTEGER NOT NULL,
    "resetAt" TIMESTAMP(3) NOT NULL,

    CONSTRAINT "SharedCounter_pkey" PRIMARY KEY ("key")
);

-- CreateTable
CREATE TABLE "SharedMark" (
    "key" TEXT NOT NULL,
    "expiresAt" TIMESTAMP(3) NOT NULL,

    CONSTRAINT "SharedMark_pkey" PRIMARY KEY ("key")
);

-- CreateTable
CREATE TABLE "SharedSignal" (
    "id" SERIAL NOT NULL,
    "channel" TEXT NOT NULL,
    "message" TEXT NOT NULL,
    "createdAt" TIMESTAMP(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,

    CONSTRAINT "SharedSignal_pkey" PRIMARY KEY ("id")
);

-- CreateIndex
CREATE INDEX "SharedCounter_resetAt_idx" ON "SharedCounter"("resetAt");

-- CreateIndex
CREATE INDEX "SharedMark_expiresAt_idx" ON "SharedMark"("expiresAt");

-- CreateIndex
CREATE INDEX "SharedSignal_createdAt_idx" ON "SharedSignal"("createdAt");

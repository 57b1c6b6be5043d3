-- AlterTable
ALTER TABLE "ApiKey" ADD COLUMN "rateLimitPerMinute" INTEGER;

-- AlterTable
ALTER TABLE "Channel" ADD COLUMN     "version" INTEGER NOT NULL DEFAULT 1;

-- AlterTable
ALTER TABLE "Content" ADD COLUMN     "version" INTEGER NOT NULL DEFAULT 1;

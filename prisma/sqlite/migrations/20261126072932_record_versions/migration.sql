-- Added in place, not by rebuilding the tables: a rebuild would drop the triggers and views that
-- earlier migrations put on "Content" (labels, tallies, the count cache, the STL SQL views).
-- AlterTable
ALTER TABLE "Channel" ADD COLUMN "version" INTEGER NOT NULL DEFAULT 1;

-- AlterTable
ALTER TABLE "Content" ADD COLUMN "version" INTEGER NOT NULL DEFAULT 1;

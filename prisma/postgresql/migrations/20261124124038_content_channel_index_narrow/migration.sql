-- DropIndex
DROP INDEX "Content_channelId_recycled_checked_taxis_id_idx";

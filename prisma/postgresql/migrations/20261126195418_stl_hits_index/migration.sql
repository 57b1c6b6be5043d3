-- The template tag's Hits order (stl/contents: approved contents of a channel scope by hits desc, id desc):
-- a page walks these entries from the highest hits and stops once it holds its rows, testing the channel
-- on each entry, instead of reading and sorting every approved row of the scope (bench/LIST-PLAN.md).
-- CreateIndex
CREATE INDEX "Content_siteId_recycled_checked_hits_id_channelId_idx" ON "Content"("siteId", "recycled", "checked", "hits", "id", "channelId");

-- The template tag's Hits order (stl/contents: approved contents of a channel scope by hits desc, id desc):
-- a page of a wide scope walks these entries from the highest hits and stops once it holds its rows,
-- instead of reading and sorting every approved row of the scope (bench/LIST-PLAN.md).
-- CreateIndex
CREATE INDEX "Content_siteId_recycled_checked_hits_id_idx" ON "Content"("siteId", "recycled", "checked", "hits", "id");

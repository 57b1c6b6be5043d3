-- CreateIndex
CREATE INDEX "Content_siteId_recycled_channelId_checked_top_recommend_hot_idx" ON "Content"("siteId", "recycled", "channelId", "checked", "top", "recommend", "hot", "color", "taxis", "id");

-- Hand-written: trigram index for Like/NotLike on titles (the list compiles them to
-- lower("title") LIKE lower(pattern), which is exactly what ILIKE does in a UTF-8 database, and
-- which this index serves; the model cannot express it portably).
CREATE EXTENSION IF NOT EXISTS pg_trgm;
CREATE INDEX "Content_title_trgm_idx" ON "Content" USING gin (lower("title") gin_trgm_ops);

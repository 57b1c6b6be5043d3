-- CreateIndex
CREATE INDEX "Content_siteId_recycled_channelId_checked_top_recommend_hot_color_taxis_id_idx" ON "Content"("siteId", "recycled", "channelId", "checked", "top", "recommend", "hot", "color", "taxis", "id");

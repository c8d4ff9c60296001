-- A notification queues its emails a chunk of subscribers at a time, each
-- chunk in a transaction of its own (one transaction for every subscriber
-- held them all in memory at once and kept every other writer waiting):
-- the last subscriber queued so far, while it is under way; NULL once every
-- subscriber was queued. A notification interrupted half-way (a restart)
-- goes on from there when it is asked again.
ALTER TABLE post_notifications ADD COLUMN resume_after BIGINT;

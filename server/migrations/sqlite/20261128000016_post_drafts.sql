-- The console's drafts: posts being written, not public until published
-- (then they are posts like any other, and the draft goes). Tags as a JSON
-- array, as in posts.
CREATE TABLE post_drafts (
    slug          TEXT   PRIMARY KEY,
    title         TEXT   NOT NULL,
    summary       TEXT   NOT NULL,
    body          TEXT   NOT NULL,
    tags          TEXT   NOT NULL,
    saved_at_ms   BIGINT NOT NULL
);

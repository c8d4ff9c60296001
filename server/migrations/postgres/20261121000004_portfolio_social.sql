-- Posts published to the social network: one row per post, so that
-- publishing again reports the existing status instead of posting twice.
-- status: published | dry_run (no network configured; nothing was sent).
CREATE TABLE social_publications (
    post_slug    TEXT PRIMARY KEY,
    status       TEXT NOT NULL,
    remote_id    TEXT,
    remote_url   TEXT,
    published_at TEXT NOT NULL
);

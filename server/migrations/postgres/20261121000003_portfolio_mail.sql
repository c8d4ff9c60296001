-- Contact submissions, newsletter subscribers, the email outbox and the
-- record of post notifications. Times in *_at_ms columns are Unix epoch
-- milliseconds; the others are RFC 3339 text.

CREATE TABLE contact_submissions (
    id         BIGSERIAL PRIMARY KEY,
    name       TEXT NOT NULL,
    email      TEXT NOT NULL,
    subject    TEXT,
    message    TEXT,
    created_at TEXT NOT NULL
);

-- status: pending (double opt-in, not confirmed yet) | subscribed | unsubscribed.
-- The unsubscribe token only lets its bearer unsubscribe this address; it is
-- kept as is so that every later email can carry the link.
CREATE TABLE subscribers (
    id                   BIGSERIAL PRIMARY KEY,
    email                TEXT NOT NULL UNIQUE,
    status               TEXT NOT NULL,
    unsubscribe_token    TEXT NOT NULL UNIQUE,
    confirm_token        TEXT UNIQUE,
    confirm_expires_ms   BIGINT,
    last_emailed_at_ms   BIGINT,
    created_at           TEXT NOT NULL,
    updated_at           TEXT NOT NULL
);
CREATE INDEX subscribers_status ON subscribers (status);

-- The transactional outbox: an email is written here in the transaction of
-- the change that causes it, and delivered by the mail worker.
-- status: pending | sent | failed.
CREATE TABLE outbox (
    id                 BIGSERIAL PRIMARY KEY,
    recipient          TEXT    NOT NULL,
    subject            TEXT    NOT NULL,
    body               TEXT    NOT NULL,
    list_unsubscribe   TEXT,
    message_id         TEXT    NOT NULL UNIQUE,
    status             TEXT    NOT NULL,
    attempts           INTEGER NOT NULL,
    next_attempt_at_ms BIGINT    NOT NULL,
    lease_until_ms     BIGINT,
    last_error         TEXT,
    created_at_ms      BIGINT    NOT NULL,
    sent_at_ms         BIGINT
);
CREATE INDEX outbox_due ON outbox (status, next_attempt_at_ms);

CREATE TABLE post_notifications (
    post_slug  TEXT    PRIMARY KEY,
    queued     INTEGER NOT NULL,
    created_at TEXT    NOT NULL
);

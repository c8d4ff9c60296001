-- Key requests: who asked (a keyed hash of the client address, never the
-- address itself), for the per-address cap on pending requests; and when
-- the site owner was last told of requests, so that they get at most one
-- email per quiet period (a digest) however many arrive.
ALTER TABLE key_requests ADD COLUMN requester TEXT;
CREATE INDEX key_requests_requester ON key_requests (requester, status);

CREATE TABLE owner_notices (
    kind          TEXT PRIMARY KEY,
    last_sent_ms  INTEGER NOT NULL,
    follow_up_due INTEGER NOT NULL
);

-- Key requests: who asked (a keyed hash of the client address, never the
-- address itself), for the per-address cap on pending requests; and when
-- the site owner was last told of requests, so that they get at most one
-- email per quiet period (a digest) however many arrive.
ALTER TABLE key_requests ADD COLUMN requester TEXT;
CREATE INDEX key_requests_requester ON key_requests (requester, status);

CREATE TABLE owner_notices (
    kind          TEXT PRIMARY KEY,
    last_sent_ms  BIGINT NOT NULL,
    follow_up_due INTEGER NOT NULL
);

-- Newsletter subscribers by mailbox: the address without its `+tag`, in
-- lower case, so that the resend guard counts `victim+1@` and `victim+2@`
-- as one inbox with an indexed lookup. Rows from before are their own
-- mailbox.
ALTER TABLE subscribers ADD COLUMN mailbox TEXT;
UPDATE subscribers SET mailbox = email;
CREATE INDEX subscribers_mailbox ON subscribers (mailbox);

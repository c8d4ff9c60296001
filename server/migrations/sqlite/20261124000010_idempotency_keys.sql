-- Idempotency keys (IETF draft `Idempotency-Key`): per caller (a hash of
-- the credential, or of the client address) and key, the request's
-- fingerprint and, once it has completed, its answer, kept 24 hours.
-- While the first request runs it holds a lease, under a token of its own
-- (`holder`); a request that finds the lease over (its replica died) takes
-- the key over with a new token, and only the holder may keep an answer or
-- free the key. The answer's body is
-- sealed with a key derived from the caller's credential: a created API
-- key's secret is not readable from this table.
CREATE TABLE idempotency_keys (
    caller         TEXT NOT NULL,
    idem_key       TEXT NOT NULL,
    fingerprint    TEXT NOT NULL,
    holder         TEXT NOT NULL,
    lease_until_ms INTEGER,
    status         INTEGER,
    headers        TEXT,
    body           BLOB,
    expires_ms     INTEGER NOT NULL,
    PRIMARY KEY (caller, idem_key)
);
CREATE INDEX idempotency_keys_expiry ON idempotency_keys (expires_ms);

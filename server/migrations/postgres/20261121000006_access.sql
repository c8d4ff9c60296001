-- Access to both services: API keys handed out by the operator, the
-- requests for them, OAuth clients and the bearer tokens issued to them.
-- Only a SHA-256 of each secret is stored: the secrets are 256-bit random
-- strings, which a fast hash protects as well as a slow one. Times are Unix
-- milliseconds.

-- A key reads `pk_<id>_<secret>`: the id finds the row, the secret's hash
-- is compared in constant time. service: portfolio | petstore.
CREATE TABLE api_keys (
    id              TEXT PRIMARY KEY,
    service         TEXT NOT NULL,
    name            TEXT NOT NULL,
    secret_hash     TEXT NOT NULL,
    scopes          TEXT NOT NULL,      -- JSON array of scope names
    created_at_ms   BIGINT NOT NULL,
    expires_at_ms   BIGINT,            -- NULL: never (rotation sets it)
    revoked_at_ms   BIGINT,
    last_used_at_ms BIGINT,
    rotated_to      TEXT                -- the key that replaced this one
);

-- status: pending | approved | rejected.
CREATE TABLE key_requests (
    id                TEXT PRIMARY KEY,
    name              TEXT NOT NULL,
    organisation      TEXT NOT NULL,
    intended_use      TEXT NOT NULL,
    expected_volume   TEXT NOT NULL,
    technical_contact TEXT NOT NULL,
    status            TEXT NOT NULL,
    key_id            TEXT REFERENCES api_keys (id),
    created_at_ms     BIGINT NOT NULL,
    decided_at_ms     BIGINT
);
CREATE INDEX key_requests_status ON key_requests (status, created_at_ms);

CREATE TABLE oauth_clients (
    client_id     TEXT PRIMARY KEY,
    name          TEXT NOT NULL,
    secret_hash   TEXT NOT NULL,
    scopes        TEXT NOT NULL,        -- JSON array: what its tokens may carry
    created_at_ms BIGINT NOT NULL,
    revoked_at_ms BIGINT
);

-- A token reads `pt_<id>_<secret>`, like a key.
CREATE TABLE oauth_tokens (
    id            TEXT PRIMARY KEY,
    secret_hash   TEXT NOT NULL,
    client_id     TEXT NOT NULL REFERENCES oauth_clients (client_id),
    scopes        TEXT NOT NULL,
    created_at_ms BIGINT NOT NULL,
    expires_at_ms BIGINT NOT NULL,
    revoked_at_ms BIGINT
);
CREATE INDEX oauth_tokens_client ON oauth_tokens (client_id);
CREATE INDEX oauth_tokens_expiry ON oauth_tokens (expires_at_ms);

-- Bumped by every change to keys and every revocation of a client or a
-- token, so that a process that caches them (a server, beside an
-- operator's CLI or another replica) reloads.
CREATE TABLE access_version (
    id      INTEGER PRIMARY KEY CHECK (id = 1),
    version BIGINT NOT NULL
);
INSERT INTO access_version (id, version) VALUES (1, 0);

-- An email that holds a secret (an API key sent to its owner) keeps its
-- body only until it is delivered.
ALTER TABLE outbox ADD COLUMN holds_secret INTEGER NOT NULL DEFAULT 0;

-- The owner's console: one-time sign-in links (printed by
-- `petstore-portfolio console-link`) and the sessions they open. Only the
-- SHA-256 of each token is stored. A link is used once; a session ends at
-- its time or when signed out.
CREATE TABLE console_sign_in_links (
    token_hash    TEXT   PRIMARY KEY,
    expires_at_ms BIGINT NOT NULL,
    used_at_ms    BIGINT
);

CREATE TABLE console_sessions (
    token_hash    TEXT   PRIMARY KEY,
    csrf_token    TEXT   NOT NULL,
    signed_in_as  TEXT   NOT NULL,
    expires_at_ms BIGINT NOT NULL
);

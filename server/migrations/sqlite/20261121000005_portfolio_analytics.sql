-- Analytics, aggregated per day (UTC). No client address is stored, raw or
-- hashed: a request is counted by route, method, status and API key name.
CREATE TABLE analytics_requests (
    day      TEXT    NOT NULL,
    route    TEXT    NOT NULL,
    method   TEXT    NOT NULL,
    status   INTEGER NOT NULL,
    api_key  TEXT    NOT NULL,
    count    INTEGER    NOT NULL,
    total_ms INTEGER    NOT NULL,
    max_ms   INTEGER    NOT NULL,
    PRIMARY KEY (day, route, method, status, api_key)
);

CREATE TABLE analytics_page_views (
    day   TEXT NOT NULL,
    path  TEXT NOT NULL,
    count INTEGER NOT NULL,
    PRIMARY KEY (day, path)
);

-- Portfolio content, loaded from the content file on first start.
-- Lists (tags, links) are JSON arrays: an item is always read whole.

CREATE TABLE site_info (
    id       INTEGER PRIMARY KEY CHECK (id = 1),
    document TEXT    NOT NULL
);

CREATE TABLE projects (
    slug           TEXT    PRIMARY KEY,
    title          TEXT    NOT NULL,
    summary        TEXT    NOT NULL,
    description    TEXT    NOT NULL,
    url            TEXT,
    repository_url TEXT,
    tags           TEXT    NOT NULL,
    featured       INTEGER NOT NULL
);

CREATE TABLE achievements (
    slug        TEXT PRIMARY KEY,
    title       TEXT NOT NULL,
    description TEXT NOT NULL,
    date        TEXT NOT NULL,
    url         TEXT
);
CREATE INDEX achievements_date ON achievements (date);

-- published_at is RFC 3339 in UTC with a Z, so text order is time order.
CREATE TABLE posts (
    slug         TEXT PRIMARY KEY,
    title        TEXT NOT NULL,
    summary      TEXT NOT NULL,
    body         TEXT NOT NULL,
    tags         TEXT NOT NULL,
    published_at TEXT NOT NULL
);
CREATE INDEX posts_published_at ON posts (published_at);

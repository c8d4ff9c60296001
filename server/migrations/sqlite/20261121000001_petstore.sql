-- Pet store tables (SQLite). Keep in step with ../postgres/20261121000001_petstore.sql:
-- the two files differ only in column types.

-- Ids of pets, orders and users are chosen by the client or, when it does not,
-- taken from id_sequences (storage.rs: Database::next_id), which never hands
-- out an id twice and steps over ids clients took.
CREATE TABLE id_sequences (
    name    TEXT    PRIMARY KEY,
    last_id INTEGER NOT NULL
);
INSERT INTO id_sequences (name, last_id) VALUES ('pets', 0), ('orders', 0), ('users', 0);

CREATE TABLE pets (
    id            INTEGER PRIMARY KEY,
    name          TEXT    NOT NULL,
    category_id   INTEGER,
    category_name TEXT,
    -- A pet is always read whole, so its lists live with it as JSON arrays;
    -- pet_tags below is the index that findPetsByTags searches.
    photo_urls    TEXT    NOT NULL,
    tags          TEXT    NOT NULL,
    status        TEXT    NOT NULL
);
CREATE INDEX pets_status ON pets (status);

CREATE TABLE pet_tags (
    pet_id INTEGER NOT NULL REFERENCES pets (id) ON DELETE CASCADE,
    name   TEXT    NOT NULL,
    PRIMARY KEY (pet_id, name)
);
CREATE INDEX pet_tags_name ON pet_tags (name);

CREATE TABLE pet_images (
    id                  INTEGER PRIMARY KEY AUTOINCREMENT,
    pet_id              INTEGER NOT NULL REFERENCES pets (id) ON DELETE CASCADE,
    content_type        TEXT    NOT NULL,
    data                BLOB    NOT NULL,
    additional_metadata TEXT,
    created_at          TEXT    NOT NULL
);
CREATE INDEX pet_images_pet ON pet_images (pet_id);

CREATE TABLE orders (
    id        INTEGER PRIMARY KEY,
    pet_id    INTEGER NOT NULL,
    quantity  INTEGER NOT NULL,
    ship_date TEXT,
    status    TEXT    NOT NULL
);
CREATE INDEX orders_pet ON orders (pet_id);

CREATE TABLE users (
    id            INTEGER PRIMARY KEY,
    username      TEXT    NOT NULL UNIQUE,
    first_name    TEXT,
    last_name     TEXT,
    email         TEXT,
    password_hash TEXT,
    phone         TEXT,
    user_status   INTEGER
);

CREATE TABLE user_sessions (
    token_hash TEXT    PRIMARY KEY,
    user_id    INTEGER NOT NULL REFERENCES users (id) ON DELETE CASCADE,
    expires_at INTEGER NOT NULL
);
CREATE INDEX user_sessions_user ON user_sessions (user_id);

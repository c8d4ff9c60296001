-- How many pets have each status, kept by triggers on pets, so that the
-- inventory reads a few rows however many pets there are (counting them
-- was a scan of the status index). Each status's count is spread over 64
-- rows by pet id (its remainder by 64, from 0), so that writers of different pets (several connections on
-- PostgreSQL) seldom wait for the same row; the inventory sums them.
CREATE TABLE pet_counts (
    status TEXT    NOT NULL,
    stripe INTEGER NOT NULL,
    pets   INTEGER NOT NULL,
    PRIMARY KEY (status, stripe)
) WITHOUT ROWID;

WITH RECURSIVE stripes (stripe) AS (SELECT 0 UNION ALL SELECT stripe + 1 FROM stripes WHERE stripe < 63)
INSERT INTO pet_counts (status, stripe, pets)
    SELECT statuses.status, stripes.stripe,
           (SELECT COUNT(*) FROM pets WHERE pets.status = statuses.status AND (pets.id % 64 + 64) % 64 = stripes.stripe)
    FROM (SELECT 'available' AS status UNION ALL SELECT 'pending' UNION ALL SELECT 'sold') AS statuses,
         stripes;

CREATE TRIGGER pet_counts_insert AFTER INSERT ON pets BEGIN
    UPDATE pet_counts SET pets = pets + 1 WHERE status = NEW.status AND stripe = (NEW.id % 64 + 64) % 64;
END;

CREATE TRIGGER pet_counts_delete AFTER DELETE ON pets BEGIN
    UPDATE pet_counts SET pets = pets - 1 WHERE status = OLD.status AND stripe = (OLD.id % 64 + 64) % 64;
END;

CREATE TRIGGER pet_counts_update AFTER UPDATE OF status ON pets WHEN OLD.status <> NEW.status BEGIN
    UPDATE pet_counts SET pets = pets - 1 WHERE status = OLD.status AND stripe = (OLD.id % 64 + 64) % 64;
    UPDATE pet_counts SET pets = pets + 1 WHERE status = NEW.status AND stripe = (NEW.id % 64 + 64) % 64;
END;

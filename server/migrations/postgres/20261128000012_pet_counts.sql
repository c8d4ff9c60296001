-- How many pets have each status, kept by triggers on pets, so that the
-- inventory reads a few rows however many pets there are (counting them
-- was a scan of the status index). Each status's count is spread over 64
-- rows by pet id (its remainder by 64, from 0), so that concurrent writers
-- of different pets seldom wait for the same row; the inventory sums them.
CREATE TABLE pet_counts (
    status TEXT    NOT NULL,
    stripe INTEGER NOT NULL,
    pets   BIGINT  NOT NULL,
    PRIMARY KEY (status, stripe)
);

INSERT INTO pet_counts (status, stripe, pets)
    SELECT statuses.status, stripes.stripe,
           (SELECT COUNT(*) FROM pets
            WHERE pets.status = statuses.status AND (pets.id % 64 + 64) % 64 = stripes.stripe)
    FROM (VALUES ('available'), ('pending'), ('sold')) AS statuses (status),
         generate_series(0, 63) AS stripes (stripe);

-- Statement-level, over the rows each statement changed (one statement may
-- write many pets): the counts' rows are locked in one order before they
-- are changed, so that two statements changing pets of the same stripes
-- the other way round wait for each other instead of deadlocking.
CREATE FUNCTION pet_counts_apply(changes JSONB) RETURNS void LANGUAGE plpgsql AS $$
BEGIN
    PERFORM 1 FROM pet_counts c
        JOIN jsonb_to_recordset(changes) AS d (status TEXT, stripe INTEGER, pets BIGINT)
            ON c.status = d.status AND c.stripe = d.stripe
        ORDER BY c.status, c.stripe
        FOR UPDATE OF c;
    UPDATE pet_counts c SET pets = c.pets + d.pets
        FROM jsonb_to_recordset(changes) AS d (status TEXT, stripe INTEGER, pets BIGINT)
        WHERE c.status = d.status AND c.stripe = d.stripe;
END
$$;

CREATE FUNCTION pet_counts_inserted() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    PERFORM pet_counts_apply(COALESCE((
        SELECT jsonb_agg(jsonb_build_object('status', status, 'stripe', stripe, 'pets', pets))
        FROM (SELECT status, (id % 64 + 64) % 64 AS stripe, COUNT(*) AS pets
              FROM new_pets GROUP BY 1, 2) AS d), '[]'));
    RETURN NULL;
END
$$;

CREATE FUNCTION pet_counts_deleted() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    PERFORM pet_counts_apply(COALESCE((
        SELECT jsonb_agg(jsonb_build_object('status', status, 'stripe', stripe, 'pets', -pets))
        FROM (SELECT status, (id % 64 + 64) % 64 AS stripe, COUNT(*) AS pets
              FROM old_pets GROUP BY 1, 2) AS d), '[]'));
    RETURN NULL;
END
$$;

-- An update that keeps a pet's status changes no count: its -1 and +1
-- cancel out and the row is left alone.
CREATE FUNCTION pet_counts_updated() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    PERFORM pet_counts_apply(COALESCE((
        SELECT jsonb_agg(jsonb_build_object('status', status, 'stripe', stripe, 'pets', pets))
        FROM (SELECT status, stripe, SUM(pets) AS pets FROM (
                  SELECT status, (id % 64 + 64) % 64 AS stripe, -1 AS pets FROM old_pets
                  UNION ALL
                  SELECT status, (id % 64 + 64) % 64, 1 FROM new_pets) AS moves
              GROUP BY 1, 2 HAVING SUM(pets) <> 0) AS d), '[]'));
    RETURN NULL;
END
$$;

CREATE TRIGGER pet_counts_insert AFTER INSERT ON pets
    REFERENCING NEW TABLE AS new_pets
    FOR EACH STATEMENT EXECUTE FUNCTION pet_counts_inserted();
CREATE TRIGGER pet_counts_delete AFTER DELETE ON pets
    REFERENCING OLD TABLE AS old_pets
    FOR EACH STATEMENT EXECUTE FUNCTION pet_counts_deleted();
CREATE TRIGGER pet_counts_update AFTER UPDATE ON pets
    REFERENCING OLD TABLE AS old_pets NEW TABLE AS new_pets
    FOR EACH STATEMENT EXECUTE FUNCTION pet_counts_updated();

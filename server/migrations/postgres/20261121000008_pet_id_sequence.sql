-- A new pet takes its id in the statement that inserts it (pets::insert:
-- `COALESCE($1, (SELECT last_id + 1 ...))`), and this trigger moves the
-- sequence on when a pet takes its next value. Ids clients choose elsewhere
-- leave it alone, as before: the server steps over them when it meets them.
-- One statement fewer for every new pet, which is what bounds the rate of
-- writes. Keep in step with ../sqlite/20261121000008_pet_id_sequence.sql.
CREATE FUNCTION pets_take_next_id() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    UPDATE id_sequences SET last_id = NEW.id WHERE name = 'pets' AND last_id = NEW.id - 1;
    RETURN NULL;
END;
$$;

CREATE TRIGGER pets_take_next_id AFTER INSERT ON pets
    FOR EACH ROW EXECUTE FUNCTION pets_take_next_id();

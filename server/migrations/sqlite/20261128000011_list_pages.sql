-- Lists of pets are read a page at a time from where the last page ended:
-- the tags' index holds each name's pet ids in order (pets_status already
-- holds each row's id, as every SQLite index does).
DROP INDEX pet_tags_name;
CREATE INDEX pet_tags_name ON pet_tags (name, pet_id);

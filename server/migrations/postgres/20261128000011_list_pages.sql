-- Lists of pets are read a page at a time from where the last page ended:
-- each index holds the ids in order after the value the list is chosen by.
DROP INDEX pets_status;
CREATE INDEX pets_status ON pets (status, id);
DROP INDEX pet_tags_name;
CREATE INDEX pet_tags_name ON pet_tags (name, pet_id);

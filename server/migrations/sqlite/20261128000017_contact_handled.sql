-- When the owner marked a contact-form submission handled (UTC, as
-- created_at); NULL while it waits.
ALTER TABLE contact_submissions ADD COLUMN handled_at TEXT;

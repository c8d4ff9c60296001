-- Emails go as text and HTML (multipart/alternative): the HTML part, NULL
-- for an email queued before it existed (sent as text only). Forgotten with
-- the text once delivered when the email held a secret.
ALTER TABLE outbox ADD COLUMN html_body TEXT;

-- Pet store sessions double as OAuth tokens (the implicit flow of
-- /oauth/authorize): each carries its scopes, space-separated. A session
-- from loginUser carries both (NULL).
ALTER TABLE user_sessions ADD COLUMN scopes TEXT;

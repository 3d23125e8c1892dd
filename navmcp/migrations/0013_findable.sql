-- Being added to a studio takes the person's consent: a handle they chose to make findable
-- (make_findable on /whoami). Someone who signs themselves in (Supabase Auth, whose user ids are
-- uuids) starts unfindable; an account the operator made (`navmcp user add`, the local owner)
-- starts findable, as its maker means to add it to studios. Existing accounts are sorted the same way.
ALTER TABLE users ADD COLUMN findable INTEGER NOT NULL DEFAULT 0;
UPDATE users SET findable = 1 WHERE NOT (length(id) = 36 AND substr(id, 9, 1) = '-');

-- A display name is never an e-mail address: a name that holds one (a Supabase user without a
-- name got theirs) becomes the handle.
UPDATE users SET name = handle WHERE name LIKE '%_@_%._%';

-- Invitations addressed to a person (navmcp/invitations.py): an admin invites a findable handle;
-- the invitation waits in that person's inbox until they accept (in their browser) or decline it.
-- Nobody is added without agreeing. Its link's secret is never shown: only the invitee answers it.
ALTER TABLE invitations ADD COLUMN invitee_id TEXT REFERENCES users(id) ON DELETE CASCADE;
-- The handle it was addressed to, as the admin wrote it: the members page lists it (on the hosted
-- store the admins may not see the invitee's account until they join).
ALTER TABLE invitations ADD COLUMN invitee_handle TEXT;
ALTER TABLE invitations ADD COLUMN declined_at TEXT;
CREATE INDEX invitations_invitee ON invitations (invitee_id) WHERE invitee_id IS NOT NULL;

-- add_member no longer adds a newcomer at once: it writes an invitation addressed to them, which
-- they accept or decline (issue 43: nobody is added without agreeing); a member's role change still
-- writes their membership. Its audit lines claim either.
UPDATE navmcp.action_writes SET tables = '{memberships,invitations}' WHERE action = 'add_member';

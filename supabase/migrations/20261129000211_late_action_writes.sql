-- Actions whose lanes' migrations came before 20261129000210 made the table of what each action
-- writes: name them there, so their audit lines can claim their changes. Deleting and restoring an
-- item (20261129000160) write items; answering an invitation addressed to you (20261129000192) writes
-- the invitation, and accepting it your membership.
INSERT INTO navmcp.action_writes (action, tables) VALUES
    ('delete_item', '{items}'), ('restore_item', '{items}'),
    ('accept_invitation', '{memberships,invitations}'), ('decline_invitation', '{invitations}');

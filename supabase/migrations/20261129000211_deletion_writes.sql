-- Deleting and restoring an item (20261129000160) write the items table: name them in the table of
-- what each action writes, so their audit lines can claim their changes (20261129000210 came after).
INSERT INTO navmcp.action_writes (action, tables) VALUES
    ('delete_item', '{items}'), ('restore_item', '{items}');

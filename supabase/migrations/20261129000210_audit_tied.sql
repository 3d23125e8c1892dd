-- Audit lines tied to the writes they record (issue 40, item 12): a member could still write, by SQL
-- through the app role, a line of any action, outcome and client in their own studio ("carol:
-- delete_studio, ok", which never happened). Now, for what the app role writes:
--
--   * A change of the feed that names an action, in a studio, needs the write itself: this
--     transaction wrote a row of a table that action writes (navmcp.action_writes; an action not
--     listed: any of those tables), as a trigger on each notes (navmcp.tx_writes). Without it the
--     change is recorded with no action (it reaches watchers as no words).
--   * A line saying "ok" claims one such change of its own transaction (same person, action and
--     studio), and each change is claimed once (audit.change_seq). "ok, approved by @X" also
--     needs X's approve in the transaction; "held: …/held/ID" a hold ID of that action they asked for.
--   * Any other line records an attempt that changed nothing, and says so: its outcome is
--     "unchanged" (an edit to what is there already) or begins with one of the refusal words.
--   * The client is the one the store set with the transaction's claims (`client`), whatever the
--     statement says.
--
-- The owner's own inserts (an import, a test's history) are taken as they are.

ALTER TABLE audit ADD COLUMN change_seq BIGINT;
CREATE UNIQUE INDEX audit_change_seq ON audit (change_seq) WHERE change_seq IS NOT NULL;

-- The tables each studio action writes (one of them suffices). Kept in step with the action table
-- by tests/test_pg_rls.py::test_every_studio_action_names_the_tables_it_writes.
CREATE TABLE navmcp.action_writes (action text COLLATE "C" PRIMARY KEY, tables text[] NOT NULL);
INSERT INTO navmcp.action_writes (action, tables) VALUES
    ('create_studio', '{studios,memberships}'), ('delete_studio', '{studios}'),
    ('add_member', '{memberships}'), ('remove_member', '{memberships}'), ('leave_studio', '{memberships}'),
    ('create_note', '{items}'), ('create_decision', '{items}'), ('create_commitment', '{items}'),
    ('edit_note', '{items}'), ('edit_commitment', '{items}'), ('edit_decision', '{items,options}'),
    ('close_decision', '{items}'), ('close_poll', '{items}'), ('close_commitment', '{items}'),
    ('reopen_decision', '{items}'), ('extend_decision', '{items}'), ('set_outcome', '{items}'),
    ('pin', '{items}'), ('unpin', '{items}'), ('amend', '{items,proposal_versions}'),
    ('vote', '{votes}'), ('consent', '{responses}'), ('object', '{responses}'), ('allocate', '{responses}'),
    ('answer', '{responses}'), ('add_option', '{options}'), ('add_time', '{options}'),
    ('add_comment', '{comments}'), ('edit_comment', '{comments}'), ('delete_comment', '{comments}'),
    ('confirm_read', '{reads}'), ('join_commitment', '{participants}'), ('leave_commitment', '{participants}'),
    ('attach', '{attachments}'), ('remove_attachment', '{attachments}'),
    ('create_invitation', '{invitations}'), ('revoke_invitation', '{invitations}'), ('remind', '{reminders}'),
    ('accept_invitation', '{memberships,invitations}'), ('decline_invitation', '{invitations}'),
    ('approve', '{held_approvals,held_actions}'), ('reject', '{held_actions}'), ('withdraw', '{held_actions}'),
    ('set_hold_rule', '{hold_rules}'), ('remove_hold_rule', '{hold_rules}');
REVOKE ALL ON navmcp.action_writes FROM PUBLIC;

-- Which tables each transaction wrote a row of (inserted, updated or deleted), noted by a trigger on
-- each table an action writes: the app role can neither write nor read this. (PostgreSQL's own
-- per-transaction counts, pg_stat_get_xact_*, also hold a pooled connection's earlier transactions
-- until they are flushed, about a second later.) A row undone by a rollback to a savepoint is undone
-- here too. Rows of finished transactions are pruned as changes are.
CREATE UNLOGGED TABLE navmcp.tx_writes (xid xid8 NOT NULL, tbl text COLLATE "C" NOT NULL, PRIMARY KEY (xid, tbl));
REVOKE ALL ON navmcp.tx_writes FROM PUBLIC;

CREATE OR REPLACE FUNCTION navmcp.note_write() RETURNS trigger
LANGUAGE plpgsql SECURITY DEFINER SET search_path = '' AS $$
BEGIN
    -- once per table and transaction: the setting only spares the insert (whoever sets it loses evidence)
    IF current_setting('navmcp.wrote_' || TG_TABLE_NAME, true) IS DISTINCT FROM '1' THEN
        INSERT INTO navmcp.tx_writes (xid, tbl) VALUES (pg_current_xact_id(), TG_TABLE_NAME) ON CONFLICT DO NOTHING;
        PERFORM set_config('navmcp.wrote_' || TG_TABLE_NAME, '1', true);
    END IF;
    RETURN NULL;
END $$;
REVOKE ALL ON FUNCTION navmcp.note_write() FROM PUBLIC;

DO $$
DECLARE t text;
BEGIN
    FOREACH t IN ARRAY '{studios,memberships,items,options,votes,responses,comments,reads,participants,attachments,invitations,reminders,held_actions,held_approvals,hold_rules,proposal_versions,item_tags,links}'::text[] LOOP
        EXECUTE format('DROP TRIGGER IF EXISTS note_write ON public.%I', t);
        EXECUTE format('CREATE TRIGGER note_write AFTER INSERT OR UPDATE OR DELETE ON public.%I'
                       ' FOR EACH ROW EXECUTE FUNCTION navmcp.note_write()', t);
    END LOOP;
END $$;

-- Whether this transaction wrote a row of a table `action` writes (an action not listed: of any).
CREATE OR REPLACE FUNCTION navmcp.action_written(action text) RETURNS boolean
LANGUAGE plpgsql STABLE SECURITY DEFINER SET search_path = '' AS $$
DECLARE
    wanted text[] := (SELECT a.tables FROM navmcp.action_writes a WHERE a.action = action_written.action);
BEGIN
    RETURN EXISTS (SELECT 1 FROM navmcp.tx_writes w
                    WHERE w.xid = pg_current_xact_id() AND (wanted IS NULL OR w.tbl = ANY (wanted)));
END $$;

CREATE OR REPLACE FUNCTION navmcp.note_change(at text, studio text, item text, action text) RETURNS void
LANGUAGE plpgsql VOLATILE SECURITY DEFINER SET search_path = '' AS $$
DECLARE
    actor text := navmcp.uid();
    made bigint;
BEGIN
    IF actor IS NULL THEN
        RAISE EXCEPTION 'a change needs an acting user' USING ERRCODE = 'insufficient_privilege';
    END IF;
    IF item IS NOT NULL AND NOT EXISTS (SELECT 1 FROM public.memberships m
                                         WHERE m.studio_id = studio AND m.user_id = actor) THEN
        RAISE EXCEPTION 'a change to an item of a studio you are not in' USING ERRCODE = 'insufficient_privilege';
    END IF;
    IF action !~ '^[a-z_]{1,40}$' OR (studio IS NOT NULL AND NOT navmcp.action_written(action)) THEN
        action := NULL;
    END IF;
    INSERT INTO public.changes (at, studio_id, item_id, user_id, action) VALUES (at, studio, item, actor, action)
        RETURNING seq INTO made;
    IF made % 1024 = 0 THEN
        DELETE FROM public.changes WHERE seq <= made - 10000;
        DELETE FROM navmcp.tx_writes WHERE xid < pg_snapshot_xmin(pg_current_snapshot());
    END IF;
    PERFORM pg_notify('navmcp_changes', made::text);
END $$;

-- The change of this transaction an "ok" line records (none: NULL), not claimed by another line.
CREATE OR REPLACE FUNCTION navmcp.audit_change(actor text, studio text, action text) RETURNS bigint
LANGUAGE sql STABLE SECURITY DEFINER SET search_path = '' AS $$
    SELECT c.seq FROM public.changes c
     WHERE c.xid = pg_current_xact_id() AND c.user_id = actor AND c.action = audit_change.action
       AND c.studio_id IS NOT DISTINCT FROM studio
       AND NOT EXISTS (SELECT 1 FROM public.audit a WHERE a.change_seq = c.seq)
     ORDER BY c.seq LIMIT 1
$$;

-- Whether @handle approved a hold in this transaction (the line of what the approval ran).
CREATE OR REPLACE FUNCTION navmcp.audit_approved_by(handle text) RETURNS boolean
LANGUAGE sql STABLE SECURITY DEFINER SET search_path = '' AS $$
    SELECT EXISTS (SELECT 1 FROM public.changes c JOIN public.users u ON u.id = c.user_id
                    WHERE c.xid = pg_current_xact_id() AND c.action = 'approve' AND u.handle = audit_approved_by.handle)
$$;

-- Whether `actor` asked for `action` in the hold `held` (the line of a write kept for approval, or
-- of a retry that joined the hold already kept).
CREATE OR REPLACE FUNCTION navmcp.audit_held(actor text, action text, held text) RETURNS boolean
LANGUAGE sql STABLE SECURITY DEFINER SET search_path = '' AS $$
    SELECT EXISTS (SELECT 1 FROM public.held_actions h
                    WHERE h.id = held AND h.requester_id = actor AND h.action = audit_held.action)
$$;

CREATE OR REPLACE FUNCTION navmcp.audit_stamp() RETURNS trigger LANGUAGE plpgsql SET search_path = '' AS $$
DECLARE
    claimed text := nullif(current_setting('request.jwt.claims', true), '')::jsonb ->> 'client';
BEGIN
    IF current_user <> 'navmcp_app' THEN
        RETURN NEW;
    END IF;
    NEW.at := navmcp.now_text();
    NEW.duration_ms := greatest(coalesce(NEW.duration_ms, 0), 0);
    NEW.change_seq := NULL;
    IF claimed IS NOT NULL THEN
        NEW.client := left(claimed, 100);
    END IF;
    IF NEW.outcome = 'ok' OR NEW.outcome LIKE 'ok, approved by @%' THEN
        NEW.change_seq := navmcp.audit_change(NEW.user_id, NEW.studio_id, NEW.action);
        IF NEW.change_seq IS NULL OR (NEW.outcome <> 'ok' AND NOT navmcp.audit_approved_by(
                substring(NEW.outcome FROM '^ok, approved by @([a-z0-9_-]+)'))) THEN
            RAISE EXCEPTION 'an audit line says "%" for % without the write it records', NEW.outcome, NEW.action
                USING ERRCODE = 'insufficient_privilege';
        END IF;
    ELSIF NEW.outcome LIKE 'held: %' THEN
        IF NOT navmcp.audit_held(NEW.user_id, NEW.action, substring(NEW.outcome FROM '/held/([A-Za-z0-9_-]+)$')) THEN
            RAISE EXCEPTION 'an audit line says "held" for % without the hold', NEW.action
                USING ERRCODE = 'insufficient_privilege';
        END IF;
    ELSIF NOT (NEW.outcome = 'unchanged' OR NEW.outcome LIKE 'unchanged, approved by @%' OR NEW.outcome LIKE 'refused: %' OR NEW.outcome LIKE 'invalid params: %' OR NEW.outcome LIKE 'failed: %'
               OR NEW.outcome LIKE 'error: %' OR NEW.outcome LIKE 'rate limited: %') THEN
        RAISE EXCEPTION 'an audit line''s outcome is "ok", "held: …" or a refusal''s'
            USING ERRCODE = 'insufficient_privilege';
    END IF;
    RETURN NEW;
END
$$;
REVOKE ALL ON FUNCTION navmcp.action_written(text), navmcp.audit_change(text, text, text),
    navmcp.audit_approved_by(text), navmcp.audit_held(text, text, text) FROM PUBLIC;
GRANT EXECUTE ON FUNCTION navmcp.audit_change(text, text, text), navmcp.audit_approved_by(text),
    navmcp.audit_held(text, text, text) TO navmcp_app;

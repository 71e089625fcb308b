-- The tenant event log (docs/server.md, *Events*; src/events.rs): one row per run-log row of
-- a tagged run (claims aside), numbered by one global sequence that tenant streams follow.
CREATE TABLE IF NOT EXISTS tenant_events (
    seq       BIGINT GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    tenant_id TEXT NOT NULL,
    run_id    TEXT NOT NULL,
    step      BIGINT NOT NULL,
    at        BIGINT NOT NULL
);
CREATE INDEX IF NOT EXISTS tenant_events_by_tenant ON tenant_events (tenant_id, seq);

-- Commit order. The trigger is deferred: it runs at COMMIT, after every other statement of
-- the transaction (so a tag written after the run's first row is seen). It takes one
-- transaction-scoped advisory lock before it draws a seq, and the lock is released only
-- after the commit is visible; so seqs become visible in increasing order, and a reader of
-- `seq > cursor` never passes a seq that commits later. The lock covers only the commit
-- itself of a tenant run's write. NOTIFY is delivered at commit, one per transaction.
CREATE OR REPLACE FUNCTION hensu_tenant_event() RETURNS trigger LANGUAGE plpgsql AS $$
DECLARE
    owner TEXT;
BEGIN
    SELECT tenant_id INTO owner FROM run_tenants WHERE run_id = NEW.run_id;
    IF owner IS NULL THEN
        RETURN NULL;
    END IF;
    -- 0x68656e73755f6576: "hensu_ev"
    PERFORM pg_advisory_xact_lock(7522540194761762166);
    INSERT INTO tenant_events (tenant_id, run_id, step, at)
        VALUES (owner, NEW.run_id, NEW.step, NEW.at);
    PERFORM pg_notify('hensu_tenant_events', '');
    RETURN NULL;
END
$$;

CREATE CONSTRAINT TRIGGER run_log_tenant_event AFTER INSERT ON run_log
    DEFERRABLE INITIALLY DEFERRED
    FOR EACH ROW WHEN (NEW.kind <> 'claimed')
    EXECUTE FUNCTION hensu_tenant_event();

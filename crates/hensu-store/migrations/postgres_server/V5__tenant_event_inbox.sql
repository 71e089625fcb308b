-- Version 5: tenant events without a cluster-wide wait in every commit (docs/server.md, *Events*;
-- src/events.rs). V4's trigger took an advisory lock and sent a NOTIFY in the commit of every
-- write of a tenant's run. Both are held through the commit's WAL flush, so the commits of all
-- tenant runs in the database waited for one another: with fsync on, a few hundred commits a
-- second for the whole cluster, however many servers and workers share it.
--
-- Now the trigger only appends the row to an inbox, in the writing transaction. A server's event
-- reader moves committed inbox rows into `tenant_events` in batches (`hensu_store` events::pg::
-- sequence): under the same advisory lock, in inbox order, with one NOTIFY per batch. `seq` is
-- drawn there, so it still becomes visible in increasing order; a run's rows keep their order,
-- since a run's next write starts after its previous one committed.
CREATE TABLE IF NOT EXISTS tenant_event_inbox (
    id        BIGINT GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    tenant_id TEXT NOT NULL,
    run_id    TEXT NOT NULL,
    step      BIGINT NOT NULL,
    at        BIGINT NOT NULL
);

-- Still the deferred constraint trigger of V4 (it runs at COMMIT, so a tag written after the
-- run's first row is seen); only its function changes.
CREATE OR REPLACE FUNCTION hensu_tenant_event() RETURNS trigger LANGUAGE plpgsql AS $$
DECLARE
    owner TEXT;
BEGIN
    SELECT tenant_id INTO owner FROM run_tenants WHERE run_id = NEW.run_id;
    IF owner IS NULL THEN
        RETURN NULL;
    END IF;
    INSERT INTO tenant_event_inbox (tenant_id, run_id, step, at)
        VALUES (owner, NEW.run_id, NEW.step, NEW.at);
    RETURN NULL;
END
$$;

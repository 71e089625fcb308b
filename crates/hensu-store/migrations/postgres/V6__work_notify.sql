-- Version 6: idle workers wait on LISTEN instead of polling (ARCHITECTURE.md, *hensu-store*). A run
-- that becomes queued (created, or put back in the queue) and a signal sent to a run (which may
-- wake a run waiting for it) notify `hensu_work`; a worker LISTENing claims at once. NOTIFY is
-- sent at commit and once per transaction, so a batch of runs queued in one transaction is one
-- wake-up. Runs that become claimable with time (a timer, an expired lease) are still found by
-- the workers' bounded poll. The payload is the schema of the writer's tables: a channel is
-- database-wide, so listeners of another schema (another deployment, a test) ignore it.
CREATE FUNCTION hensu_work_notify() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    PERFORM pg_notify('hensu_work', current_schema());
    RETURN NULL;
END
$$;

CREATE TRIGGER runs_queued_notify AFTER INSERT OR UPDATE OF status ON runs
    FOR EACH ROW WHEN (NEW.status = 'queued')
    EXECUTE FUNCTION hensu_work_notify();

CREATE TRIGGER run_signals_notify AFTER INSERT ON run_signals
    FOR EACH ROW
    EXECUTE FUNCTION hensu_work_notify();

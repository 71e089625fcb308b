-- Version 5: schedules (docs/schedules.md). A schedule row carries the next time it is due;
-- a firing is keyed by (tenant, schedule, tick), so one tick is fired once however many servers
-- share the database (the claim also compares-and-sets `next_fire_at`).
CREATE TABLE schedules (
    tenant_id     TEXT NOT NULL,
    schedule_id   TEXT NOT NULL,
    workflow_id   TEXT NOT NULL,
    cron          TEXT NOT NULL,
    time_zone     TEXT NOT NULL,
    context       BYTEA NOT NULL,
    overlap       TEXT NOT NULL,
    missed        TEXT NOT NULL,
    grace_seconds BIGINT NOT NULL,
    paused        BOOLEAN NOT NULL DEFAULT FALSE,
    source        TEXT NOT NULL,
    next_fire_at  BIGINT,
    created_at    BIGINT NOT NULL,
    updated_at    BIGINT NOT NULL,
    PRIMARY KEY (tenant_id, schedule_id)
);
CREATE INDEX schedules_due ON schedules (next_fire_at)
    WHERE NOT paused AND next_fire_at IS NOT NULL;
CREATE TABLE schedule_firings (
    tenant_id   TEXT NOT NULL,
    schedule_id TEXT NOT NULL,
    tick        BIGINT NOT NULL,
    state       TEXT NOT NULL,
    run_id      TEXT,
    detail      TEXT,
    owner       TEXT NOT NULL,
    claimed_at  BIGINT NOT NULL,
    updated_at  BIGINT NOT NULL,
    PRIMARY KEY (tenant_id, schedule_id, tick)
);
CREATE INDEX schedule_firings_open ON schedule_firings (claimed_at)
    WHERE state IN ('claimed', 'queued');

-- Version 3: a pause request is a flag of the run in the store (as a cancellation is), so the
-- process that executes the run, on whichever machine, sees it with its next checkpoint.
ALTER TABLE runs ADD COLUMN pause_requested BOOLEAN NOT NULL DEFAULT FALSE;

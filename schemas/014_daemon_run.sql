-- 014: the runs the recording daemon stored, and how its after-run
-- pipeline ended for each (issue 46: a daemon killed while its pipeline
-- worked left runs processed but never validated, and nothing said so).
-- The daemon enters a run here when the run begins; `pipeline` is NULL
-- until the pipeline's last step for it ends, then 'done',
-- 'process-failed', 'validate-failed' or 'validate-partial'.  At start
-- the daemon looks at its last 100 runs: one with no outcome here that
-- lacks its processing (and has no 'refused' quality record) or its
-- validation is queued again or named (docs/acquire.md, "After a crash").
-- A failed step is an answer too (the log named the command that does it
-- by hand), so no run is tried without end.  Runs other recorders stored
-- (acquire record, sim --store, imports) have no row.
CREATE TABLE daemon_run (
    run_id       INTEGER PRIMARY KEY REFERENCES run(id) ON DELETE CASCADE,
    pipeline     TEXT CHECK (pipeline IS NULL OR pipeline IN
                     ('done', 'process-failed', 'validate-failed', 'validate-partial')),
    pipeline_utc TEXT               -- when the pipeline's outcome was stored
);

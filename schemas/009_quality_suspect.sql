-- 009: a fourth data-quality word, 'suspect' (issue 44): a check of the
-- run against the physics failed (the two beams disagree, the impacts'
-- lattice does not close, a speed the prism cannot reach, ...) and
-- nothing was measured through it.  The numbers are stored, so that a
-- person can look at them, but are not to be trusted; its faults say
-- which check failed.  'good' now means every check passed.  SQLite
-- cannot change a CHECK constraint, so the table is made anew and its
-- rows copied (as 006 did for run; foreign keys are off while db/store.c
-- migrates, and its foreign key check runs before the commit).  No table
-- refers to run_quality, so nothing else changes.
CREATE TABLE run_quality_new (
    run_id       INTEGER PRIMARY KEY REFERENCES run(id) ON DELETE CASCADE,
    quality      TEXT NOT NULL CHECK (quality IN ('good', 'degraded', 'suspect', 'refused')),
    faults       TEXT NOT NULL DEFAULT '',
    recorded_utc TEXT NOT NULL,
    version      TEXT NOT NULL       -- the prismlab that assessed it
);
INSERT INTO run_quality_new SELECT run_id, quality, faults, recorded_utc, version FROM run_quality;
DROP TABLE run_quality;
ALTER TABLE run_quality_new RENAME TO run_quality;

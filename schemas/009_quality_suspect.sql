-- 009: the quality 'suspect' (issue 44): processing stored the run's
-- numbers, but a check against the physics failed and nothing was
-- measured through it (the impacts' own clock and the integral of omega
-- disagree over a stretch, docs/process.md "Checked against the
-- physics"); the faults say which.  SQLite cannot change a CHECK in
-- place, so the table is rebuilt with its rows.
CREATE TABLE run_quality_009 (
    run_id       INTEGER PRIMARY KEY REFERENCES run(id) ON DELETE CASCADE,
    quality      TEXT NOT NULL CHECK (quality IN ('good', 'degraded', 'suspect', 'refused')),
    faults       TEXT NOT NULL DEFAULT '',
    recorded_utc TEXT NOT NULL,
    version      TEXT NOT NULL       -- the prismlab that assessed it
);
INSERT INTO run_quality_009 (run_id, quality, faults, recorded_utc, version)
    SELECT run_id, quality, faults, recorded_utc, version FROM run_quality;
DROP TABLE run_quality;
ALTER TABLE run_quality_009 RENAME TO run_quality;

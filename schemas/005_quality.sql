-- 005: the run's data-quality record (docs/data-model.md, "Data quality").
-- One row per run that processing has assessed: 'good' (nothing went
-- wrong), 'degraded' (measured through a fault) or 'refused' (processing
-- could not measure the run; it then has no processing row, and faults
-- holds the one line 'refused reason="..."').  faults is one fault a
-- line, each '<kind> key=value ...' (db/quality.h).  The row lives beside
-- processing rather than in it so that a refused run, which has no
-- processing row, still carries its record; prismlab writes both in one
-- transaction and drops both together (re-processing, a refusal,
-- `run set`).  Runs processed before this migration have no row: their
-- quality was never assessed.
CREATE TABLE run_quality (
    run_id       INTEGER PRIMARY KEY REFERENCES run(id) ON DELETE CASCADE,
    quality      TEXT NOT NULL CHECK (quality IN ('good', 'degraded', 'refused')),
    faults       TEXT NOT NULL DEFAULT '',
    recorded_utc TEXT NOT NULL,
    version      TEXT NOT NULL       -- the prismlab that assessed it
);

-- 012: a run that a command is working on now (issue 45: `run show` and
-- the run page said "not validated: prismlab validate 2" while the
-- daemon's pipeline was validating run 2).  `process` and `validate`
-- write a row when they start on a run and delete it when its results are
-- stored; a row whose process has gone (killed, a crash: pid no longer
-- alive on host) is stale, and readers ignore it.  Nothing here is a
-- result: a store copied elsewhere may carry a stale row, never a wrong one.
CREATE TABLE run_work (
    run_id       INTEGER PRIMARY KEY REFERENCES run(id) ON DELETE CASCADE,
    step         TEXT NOT NULL CHECK (step IN ('processing', 'validating')),
    pid          INTEGER NOT NULL,
    host         TEXT NOT NULL,
    started_utc  TEXT NOT NULL
);

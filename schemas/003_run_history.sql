-- 003: corrections of a run's metadata (`prismlab run set`).  A run's
-- samples never change; what the operator wrote down about it (prism,
-- ramp, experiment, beam heights and signs, LDV scale, release angle,
-- notes) may be corrected, and every correction is kept: when, which
-- field, the value before and after, and the prismlab that made it.
-- Values are text as `run show` prints them ('' for none).  A run's
-- history goes with the run when it is deleted.
CREATE TABLE run_change (
    id          INTEGER PRIMARY KEY,
    run_id      INTEGER NOT NULL REFERENCES run(id) ON DELETE CASCADE,
    changed_utc TEXT NOT NULL,
    field       TEXT NOT NULL,       -- prism, ramp, experiment, h1_m, h2_m, sign1, sign2,
                                     -- ldv_scale_mps_per_v, lambda0_deg, notes
    old_value   TEXT NOT NULL,
    new_value   TEXT NOT NULL,
    version     TEXT NOT NULL        -- the prismlab that made the change
);
CREATE INDEX run_change_run ON run_change(run_id);

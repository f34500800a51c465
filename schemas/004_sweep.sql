-- 004: parameter sweeps (prismlab sweep, docs/sweep.md).  A sweep is the
-- sweep file as read (its text and SHA-256, so --resume can refuse a
-- changed file) and the list of its points; each stored point holds the
-- parameters it ran with and the model's summary, both as JSON objects
-- (SQLite's json_extract() reads them), and the series asked for.  A point
-- is stored once, by the one writer (rank 0), in the transaction that
-- carries it: a point either has its whole row or none, so a sweep killed
-- half-way resumes with the points that have no row.  The rows depend
-- only on the sweep file and the build, never on how many workers or
-- ranks computed them; who computed what, and when, is in sweep_session.
CREATE TABLE sweep (
    sweep_id INTEGER PRIMARY KEY,
    name TEXT NOT NULL UNIQUE,           -- [sweep] name
    model TEXT NOT NULL,                 -- simulate, dimer
    spec TEXT NOT NULL,                  -- the sweep file's text
    spec_sha256 TEXT NOT NULL,
    n_points INTEGER NOT NULL CHECK (n_points > 0),
    axes TEXT NOT NULL,                  -- axis names, comma-separated, slowest first
    columns TEXT NOT NULL,               -- result names, comma-separated, in export order
    series TEXT NOT NULL DEFAULT '',     -- series names stored per point, comma-separated
    created_utc TEXT NOT NULL,
    software_version TEXT NOT NULL
);

CREATE TABLE sweep_point (
    sweep_id INTEGER NOT NULL REFERENCES sweep(sweep_id) ON DELETE CASCADE,
    idx INTEGER NOT NULL CHECK (idx >= 0),   -- 0 .. n_points-1, the last axis fastest
    params TEXT NOT NULL,                -- JSON: every parameter the point ran with
    result TEXT NOT NULL,                -- JSON: the model's summary (and "error" when it failed)
    ok INTEGER NOT NULL CHECK (ok IN (0, 1)),  -- 0: the model refused or failed (result.error says why)
    series BLOB,                         -- little-endian float64, the series one after another; NULL: none
    PRIMARY KEY (sweep_id, idx)
);

-- One row per `prismlab sweep` invocation that ran points of a sweep.
CREATE TABLE sweep_session (
    session_id INTEGER PRIMARY KEY,
    sweep_id INTEGER NOT NULL REFERENCES sweep(sweep_id) ON DELETE CASCADE,
    started_utc TEXT NOT NULL,
    finished_utc TEXT,                   -- NULL: killed or still running
    workers INTEGER NOT NULL,            -- ranks (MPI) or threads (one machine)
    mode TEXT NOT NULL,                  -- local, mpi
    points_before INTEGER NOT NULL,      -- points already stored when it started
    points_done INTEGER NOT NULL DEFAULT 0,   -- points it stored
    points_handed INTEGER NOT NULL DEFAULT 0, -- points it had handed out at its last store:
                                         -- after a kill, handed - done were in flight
    wall_s REAL,                         -- from start to the last point stored
    compute_s REAL                       -- sum over points of the model's time
);

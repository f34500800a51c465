-- 006: run ids are never reused.  With a plain INTEGER PRIMARY KEY SQLite
-- gives a new row the largest id + 1, so deleting the newest run and
-- storing another gave the new one the deleted run's id, and notes,
-- links and reports that named it pointed at other data (issue 30).
-- AUTOINCREMENT keeps the largest id ever used in sqlite_sequence and
-- never hands it out again.  SQLite cannot add AUTOINCREMENT to a table,
-- so the table is made anew and the rows copied (SQLite's "making other
-- kinds of table schema changes", with foreign keys off, which db/store.c
-- does for every migration; its foreign key check runs before the
-- commit).  The rows, their ids and every table that refers to them stay
-- as they were; sqlite_sequence starts at the largest id present, so an
-- id deleted before this migration above the largest left may still come
-- back once: nothing recorded it.
CREATE TABLE run_new (
    id              INTEGER PRIMARY KEY AUTOINCREMENT,
    prism_id        INTEGER REFERENCES prism(id),
    ramp_id         INTEGER REFERENCES ramp(id),
    experiment_id   INTEGER REFERENCES experiment(id),
    started_utc     TEXT NOT NULL,
    sample_rate_hz  REAL NOT NULL CHECK (sample_rate_hz > 0),
    n_channels      INTEGER NOT NULL CHECK (n_channels BETWEEN 1 AND 64),
    -- How each raw sample is laid out in the chunk BLOBs; nothing is
    -- converted on the way in.  s24_32: a 24-bit code in a 32-bit word.
    sample_format   TEXT NOT NULL CHECK (sample_format IN
                        ('s16', 's24_32', 's32', 'u16', 'u32', 'f32', 'f64')),
    byte_order      TEXT NOT NULL CHECK (byte_order IN ('le', 'be')),
    state           TEXT NOT NULL CHECK (state IN
                        ('recording', 'complete', 'interrupted', 'overrun', 'imported')),
    overrun_frame   INTEGER,          -- first frame lost, when state = 'overrun'
    source_kind     TEXT NOT NULL CHECK (source_kind IN ('comedi', 'wav', 'csv', 'sim')),
    source_detail   TEXT NOT NULL DEFAULT '', -- device path or file name
    source_sha256   TEXT,             -- of the imported file, hex
    synthetic       INTEGER NOT NULL DEFAULT 0 CHECK (synthetic IN (0, 1)),
    lambda0_rad     REAL,             -- release angle the operator set, if known
    pretrigger_frames INTEGER NOT NULL DEFAULT 0,
    n_frames        INTEGER NOT NULL DEFAULT 0, -- frames committed in chunks
    ended_utc       TEXT,
    notes           TEXT NOT NULL DEFAULT ''
);
INSERT INTO run_new SELECT * FROM run;
DROP TABLE run;
ALTER TABLE run_new RENAME TO run;
CREATE INDEX run_experiment ON run(experiment_id);
CREATE INDEX run_sha256 ON run(source_sha256);

-- schemas/001_init.sql - the first prismlab schema.
--
-- Units are SI throughout (metres, seconds, radians, kilograms, volts);
-- a column whose unit is not obvious carries it in its name.  Times of day
-- are ISO 8601 UTC text ('2026-11-22T10:31:07Z').  docs/data-model.md
-- explains every table and shows how to read a run without prismlab.

-- The catalogue ---------------------------------------------------------

CREATE TABLE prism (
    id            INTEGER PRIMARY KEY,
    name          TEXT NOT NULL UNIQUE,
    n_edges       INTEGER NOT NULL CHECK (n_edges >= 3),
    a0_m          REAL NOT NULL CHECK (a0_m > 0),     -- centre of mass to each edge
    length_m      REAL NOT NULL CHECK (length_m > 0), -- along the prism's axis
    mass_kg       REAL CHECK (mass_kg IS NULL OR mass_kg > 0),
    density_kg_m3 REAL CHECK (density_kg_m3 IS NULL OR density_kg_m3 > 0),
    material      TEXT NOT NULL,
    source        TEXT,                               -- where the numbers come from
    CHECK (mass_kg IS NOT NULL OR density_kg_m3 IS NOT NULL)
);

CREATE TABLE ramp (
    id         INTEGER PRIMARY KEY,
    name       TEXT NOT NULL UNIQUE,
    material   TEXT NOT NULL,                        -- the surface the prism rolls on
    beta_rad   REAL NOT NULL CHECK (beta_rad > 0 AND beta_rad < 1.5707963267948966),
    beta_sd_rad REAL CHECK (beta_sd_rad IS NULL OR beta_sd_rad >= 0), -- stated uncertainty
    mu_s       REAL NOT NULL CHECK (mu_s > 0),         -- static (stick) friction
    mu         REAL CHECK (mu IS NULL OR mu > 0),      -- slip friction; NULL: equal to mu_s
    length_m   REAL CHECK (length_m IS NULL OR length_m > 0),
    source     TEXT
);

CREATE TABLE experiment (
    id          INTEGER PRIMARY KEY,
    name        TEXT NOT NULL UNIQUE,
    description TEXT NOT NULL DEFAULT '',
    created_utc TEXT NOT NULL
);

-- Runs and their raw samples --------------------------------------------

CREATE TABLE run (
    id              INTEGER PRIMARY KEY,
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
CREATE INDEX run_experiment ON run(experiment_id);
CREATE INDEX run_sha256 ON run(source_sha256);

-- One row per recorded channel.  Calibration maps a raw code c to volts by
-- the polynomial V = sum_k coef_k (c - cal_origin)^k, k = 0..3, the shape
-- of comedilib's comedi_polynomial_t; a linear range is the order-1 case.
-- The LDV's velocity decoder then gives m/s = V * ldv_scale_mps_per_v, and
-- beam_sign turns it into the downhill velocity of the prism's surface.
CREATE TABLE channel (
    run_id          INTEGER NOT NULL REFERENCES run(id) ON DELETE CASCADE,
    idx             INTEGER NOT NULL CHECK (idx >= 0),
    name            TEXT NOT NULL DEFAULT '',
    source_channel  INTEGER,          -- channel number at the source (DAQ or file)
    beam_height_m   REAL NOT NULL CHECK (beam_height_m >= 0),
    beam_sign       INTEGER NOT NULL CHECK (beam_sign IN (-1, 1)),
    ldv_scale_mps_per_v REAL NOT NULL CHECK (ldv_scale_mps_per_v > 0),
    cal_kind        TEXT NOT NULL CHECK (cal_kind IN
                        ('softcal', 'hardcal', 'linear', 'file', 'identity')),
    cal_origin      REAL NOT NULL DEFAULT 0,
    cal_order       INTEGER NOT NULL CHECK (cal_order BETWEEN 0 AND 3),
    cal_c0          REAL NOT NULL DEFAULT 0,
    cal_c1          REAL NOT NULL DEFAULT 0,
    cal_c2          REAL NOT NULL DEFAULT 0,
    cal_c3          REAL NOT NULL DEFAULT 0,
    range_min_v     REAL,             -- the converter's range, for information
    range_max_v     REAL,
    maxdata         INTEGER,          -- largest raw code the converter gives
    PRIMARY KEY (run_id, idx)
);

-- Raw samples, frame-interleaved (channel 0, 1, ..., channel 0, 1, ...),
-- exactly as the source delivered them.  crc32 is zlib's CRC-32 of data.
CREATE TABLE chunk (
    id          INTEGER PRIMARY KEY,
    run_id      INTEGER NOT NULL REFERENCES run(id) ON DELETE CASCADE,
    first_frame INTEGER NOT NULL CHECK (first_frame >= 0),
    n_frames    INTEGER NOT NULL CHECK (n_frames > 0),
    crc32       INTEGER NOT NULL,
    data        BLOB NOT NULL,
    UNIQUE (run_id, first_frame)
);

-- What the later stages derive --------------------------------------------

-- One processing record per run; re-processing replaces it (and, through
-- the cascade, its series and impacts) in one transaction.
CREATE TABLE processing (
    run_id           INTEGER PRIMARY KEY REFERENCES run(id) ON DELETE CASCADE,
    processed_utc    TEXT NOT NULL,
    prismlab_version TEXT NOT NULL,
    params           TEXT NOT NULL,    -- key=value lines: cut-off, thresholds, ...
    release_frame    INTEGER,
    end_frame        INTEGER,
    release_t_s      REAL,
    end_t_s          REAL,
    n_impacts        INTEGER,
    lp_end           REAL,
    omega_last_mean  REAL,             -- mean rotary speed over the last second, rad/s
    ratio_mean       REAL,             -- mean omega+/omega- over the impacts
    ratio_sd         REAL,
    warnings         TEXT NOT NULL DEFAULT ''
);

-- A uniformly sampled series: sample k is at t0_s + k / rate_hz.  data
-- holds n little-endian IEEE-754 doubles.  decimation 1 is the full-rate
-- series; larger values are copies thinned for plotting.
CREATE TABLE series (
    run_id     INTEGER NOT NULL REFERENCES processing(run_id) ON DELETE CASCADE,
    name       TEXT NOT NULL,          -- omega, theta, Lp, vp1, vp2, ...
    unit       TEXT NOT NULL,
    decimation INTEGER NOT NULL DEFAULT 1 CHECK (decimation >= 1),
    t0_s       REAL NOT NULL,
    rate_hz    REAL NOT NULL CHECK (rate_hz > 0),
    n          INTEGER NOT NULL CHECK (n >= 0),
    data       BLOB NOT NULL,
    PRIMARY KEY (run_id, name, decimation)
);

CREATE TABLE impact (
    run_id      INTEGER NOT NULL REFERENCES processing(run_id) ON DELETE CASCADE,
    idx         INTEGER NOT NULL CHECK (idx >= 0),
    t_s         REAL NOT NULL,         -- from the start of the run
    omega_minus REAL NOT NULL,         -- rad/s just before the impact
    omega_plus  REAL NOT NULL,         -- rad/s just after
    ratio       REAL NOT NULL,         -- omega_plus / omega_minus
    interval_s  REAL,                  -- to the next impact; NULL for the last
    PRIMARY KEY (run_id, idx)
);

-- A simulation of the model, matched to a run or standalone (run_id NULL).
CREATE TABLE simulation (
    id            INTEGER PRIMARY KEY,
    run_id        INTEGER REFERENCES run(id) ON DELETE CASCADE,
    law           TEXT NOT NULL CHECK (law IN ('line', 'plastic')),
    fit           TEXT NOT NULL CHECK (fit IN ('none', 'recorded', 'fitted')),
    created_utc   TEXT NOT NULL,
    n_edges       INTEGER NOT NULL,
    a0_m          REAL NOT NULL,
    beta_rad      REAL NOT NULL,
    lambda0_rad   REAL NOT NULL,
    mu_s          REAL NOT NULL,
    mu            REAL NOT NULL,
    h1_m          REAL,
    h2_m          REAL,
    t0_s          REAL NOT NULL DEFAULT 0, -- release instant on the run's clock
    duration_s    REAL NOT NULL,
    rate_hz       REAL NOT NULL,
    status        TEXT NOT NULL,          -- end, stopped, left_ramp, slip, detached
    status_t_s    REAL,
    lp_end        REAL,
    n_impacts     INTEGER,
    params        TEXT NOT NULL DEFAULT ''
);
CREATE INDEX simulation_run ON simulation(run_id);

-- The comparison of one run with one simulation.
CREATE TABLE validation (
    run_id          INTEGER NOT NULL REFERENCES run(id) ON DELETE CASCADE,
    law             TEXT NOT NULL CHECK (law IN ('line', 'plastic')),
    fit             TEXT NOT NULL CHECK (fit IN ('recorded', 'fitted')),
    simulation_id   INTEGER NOT NULL REFERENCES simulation(id) ON DELETE CASCADE,
    created_utc     TEXT NOT NULL,
    max_rel_err_lp  REAL,
    rms_err_lp      REAL,
    lp_end_meas     REAL,
    lp_end_sim      REAL,
    omega_last_meas REAL,
    omega_last_sim  REAL,
    ratio_meas      REAL,
    ratio_pred      REAL,
    n_impacts_meas  INTEGER,
    n_impacts_sim   INTEGER,
    pure_rotation   TEXT,                 -- the simulation's (2.2) status
    lambda0_rad     REAL,
    lambda0_sd_rad  REAL,
    t0_s            REAL,
    t0_sd_s         REAL,
    beta_rad        REAL,
    fit_residual    REAL,
    PRIMARY KEY (run_id, law, fit)
);

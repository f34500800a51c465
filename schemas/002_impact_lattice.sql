-- 002: what the lattice search (process/lattice.c) knows of each impact and
-- of the run: an impact's time has an uncertainty and its ratio a standard
-- error; a slot of the lattice whose step is below the noise is still an
-- impact (the prism must have turned through it), marked unconfirmed; the
-- processing record says how many impacts the lattice expects and how many
-- stood above the noise.  Rows written before this migration hold NULL.
ALTER TABLE impact ADD COLUMN t_sd_s REAL;          -- s, standard uncertainty of t_s
ALTER TABLE impact ADD COLUMN ratio_se REAL;        -- standard error of ratio
ALTER TABLE impact ADD COLUMN confirmed INTEGER;    -- 1: step above the noise; 0: placed by the lattice
ALTER TABLE processing ADD COLUMN n_expected INTEGER;   -- slots of the lattice in the window
ALTER TABLE processing ADD COLUMN n_confirmed INTEGER;  -- of them, with a step above the noise
ALTER TABLE processing ADD COLUMN ratio_mean_se REAL;   -- standard error of ratio_mean

-- 010: where a recording skipped frames (issue 44, "time is what the
-- samples say"): a logger that dropped a buffer leaves its CSV's time
-- column jumping by a whole number of frames.  The import keeps the frame
-- index meaning time: it stores `frames` frames in the gap, drawn as the
-- straight line between the means of the millisecond either side (the
-- line the front end draws across a drop-out of both beams), and one row
-- here for each gap, so that nothing reads those frames as measured.
-- first_frame is the run's frame index of the gap's first missing frame.
-- Processing bridges each gap by the impact lattice (docs/process.md,
-- docs/acquire.md "Gaps in the time column").  Runs without a row had no
-- gap the import could see.
CREATE TABLE run_gap (
    run_id       INTEGER NOT NULL REFERENCES run(id) ON DELETE CASCADE,
    first_frame  INTEGER NOT NULL CHECK (first_frame > 0),
    n_frames     INTEGER NOT NULL CHECK (n_frames > 0),
    PRIMARY KEY (run_id, first_frame)
) WITHOUT ROWID;

-- 013: runs cut from one long recording (issue 46: `import
-- --split-releases`).  A logger left running through many releases writes
-- one file; the import stores one run per release, each with its lead-in
-- and tail, and cut_first_frame says where the run's frame 0 lies in the
-- file (source_detail names the file, source_sha256 is the file's).  The
-- run's samples_sha256 is its own samples' (schema 011), as for any run.
-- NULL: the run is a whole recording.  One file's cuts are told apart by
-- their first frames, so an import cut short stores the missing ones
-- when run again (docs/acquire.md, "One run per release").
ALTER TABLE run ADD COLUMN cut_first_frame INTEGER
    CHECK (cut_first_frame IS NULL OR cut_first_frame >= 0);

-- 011: which runs hold the same samples, and when a run was recorded
-- (issue 45).
--
-- samples_sha256 is the SHA-256 of a run's raw samples: its chunks' bytes
-- in frame order, exactly as stored (frame-interleaved, in the stored
-- format and byte order).  The writer that every import, recording and
-- the daemon share computes it as the frames go in (acquire/writer.c);
-- two runs with the same value hold the same samples, so the second is
-- no independent evidence (docs/data-model.md, "Runs that hold the same
-- samples").  NULL: not checked (a run with no frames, one still
-- recording, or one whose writer failed).  Runs stored before this
-- migration are hashed by prismlab right after it, in the same
-- transaction (db/store.c), from their chunks.
--
-- started_from says where started_utc comes from: 'clock' (the
-- recorder's clock when the run began), 'metadata' (a file's prismlab
-- metadata line, started_utc=), 'bwf' (a WAV's broadcast extension:
-- origination date and time), 'riff' (a WAV's LIST INFO creation date,
-- ICRD), 'mtime' (the file's modification time less the recording's
-- length) or 'import' (the time of the import: runs imported before
-- prismlab read the recording's own time).  NULL: not known.
-- imported_utc is when an import stored the run (NULL for live runs).
ALTER TABLE run ADD COLUMN samples_sha256 TEXT;
ALTER TABLE run ADD COLUMN started_from TEXT CHECK (started_from IS NULL OR
    started_from IN ('clock', 'metadata', 'bwf', 'riff', 'mtime', 'import'));
ALTER TABLE run ADD COLUMN imported_utc TEXT;
CREATE INDEX run_samples_sha256 ON run(samples_sha256);
UPDATE run SET started_from = 'import', imported_utc = started_utc
    WHERE source_kind IN ('wav', 'csv');
UPDATE run SET started_from = 'clock' WHERE source_kind IN ('comedi', 'sim');

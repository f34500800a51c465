-- 008: the LDV decoder's delay at DC, per channel, as the lab knows it
-- (issue 33, item 2): the data sheet's figure for the velocity range, or
-- 1 / (2 pi f_c) of its tracking filter.  Given in rig.ini ([beams]
-- decoder_delay_s), by `prismlab import --decoder-delay-s` or a
-- manifest's decoder_delay_s column.  Processing moves the impacts'
-- instants back by it (the two channels' mean, when both have one), so
-- that impact.t_s is the contact, not the decoded transition's centre.
-- NULL (every row stored before this migration): not known.
ALTER TABLE channel ADD COLUMN decoder_delay_s REAL
    CHECK (decoder_delay_s IS NULL OR (decoder_delay_s > 0 AND decoder_delay_s <= 0.1));

-- 007: the systematic part of a fitted parameter's uncertainty, kept
-- apart from the statistical one (issue 33, item 3).  lambda0_sd_rad and
-- t0_sd_s stay what they were, the fit's statistical standard errors
-- (block jackknife and AR(1) formal); these hold the systematic terms in
-- quadrature (the lab's local g against the model's standard gravity,
-- beta's stated uncertainty where it was not fitted, the model's step;
-- each term by itself is in the simulation's params).  The total is
-- sqrt(sd^2 + sys^2); NULL here (a row stored before this migration, or
-- a parameter not fitted) means no systematic term was worked out.
ALTER TABLE validation ADD COLUMN lambda0_sys_rad REAL;
ALTER TABLE validation ADD COLUMN t0_sys_s REAL;

/* acquire/rigconf.h - the rig's configuration file (INI, read by libinih).
 *
 *   [daq]    source = comedi | sim; device, subdevice, channels = 0,1,
 *            range, aref = ground|common|diff|other, rate_hz, buffer_bytes
 *   [beams]  h1_m, h2_m, sign1, sign2, ldv_scale_mps_per_v (V, or V1,V2:
 *            beam 1's and beam 2's vibrometer),
 *            decoder_delay_s (S, or S1,S2: the LDV decoders' delays at DC,
 *            stored with each run's channels; absent: not known)
 *   [store]  db, sync = normal|full, commit_interval_s
 *   [run]    prism, ramp, experiment, lambda0_deg, duration_s
 *   [sim]    (source = sim) prism, ramp, lambda0_deg, seed (fixes the
 *            imperfections' draws; absent: a new seed each run), paced = 0|1,
 *            ramp_length_m (0: endless), motion_s (cap on the motion)
 *   [pipeline] after_run = process, validate | process | none: what the
 *            daemon runs on each run it stored, as soon as the run stops;
 *            fit = lambda0,t0,beta (validate's --fit; default validate's)
 *   [live]   search = on | off: the impact search while recording (on);
 *            cpu_share = the most of one core its looks take (0.2)
 *
 * docs/acquire.md has an example.  Unknown sections or keys are errors:
 * a misspelt key must not be silently ignored on a rig.
 */
#ifndef PL_ACQUIRE_RIGCONF_H
#define PL_ACQUIRE_RIGCONF_H

#include "acquire/comedi_source.h"
#include "acquire/source.h"
#include "core/error.h"

/* [sim]: what the rig simulator plays when it stands in for the card;
 * names and numbers only (acquire/sim/ turns them into a run). */
typedef struct {
    char prism[PL_NAME_SIZE], ramp[PL_NAME_SIZE];    /* "": [run]'s */
    double lambda0_deg;          /* NaN: [run]'s */
    long seed;                   /* -1: not given, each run draws its own;
                                    0: 1 */
    int paced;
    double ramp_length_m;        /* NaN: the catalogue's */
    double motion_s;             /* NaN: 30 s */
} pl_rig_sim;

/* [pipeline] after_run: the steps, in this order. */
enum { PL_AFTER_PROCESS = 1, PL_AFTER_VALIDATE = 2 };

typedef struct {
    char source[16];             /* "comedi" or "sim" */
    pl_comedi_options comedi;    /* [daq] */
    pl_source_config beams;      /* [beams]: heights, signs, LDV scales */
    pl_rig_sim sim;              /* [sim] */
    char db[1024];
    int sync_full;
    double commit_interval_s;
    char prism[PL_NAME_SIZE], ramp[PL_NAME_SIZE], experiment[PL_NAME_SIZE];
    double lambda0_deg;          /* NaN: not given */
    double duration_s;           /* 0: until stopped */
    unsigned after_run;          /* PL_AFTER_* bits; 0: none */
    char fit[64];                /* [pipeline] fit: validate's --fit; "": its
                                    default (PL_FIT_DEFAULT) */
    struct {                     /* [live]: the online impact search while
                                    recording (acquire/live.h) */
        int search;              /* search = on (1, default) or off */
        double cpu_share;        /* the most of one core its looks take (0.2) */
    } live;
} pl_rigconf;

/* Defaults: comedi on /dev/comedi0, first streaming AI subdevice, channels
 * 0 and 1, range 0, ground reference, 10 kHz, signs +1 / -1, 25 mm/s/V,
 * ./prismlab.db, synchronous=NORMAL, 0.1 s commits. */
void pl_rigconf_init(pl_rigconf *rc);

/* Reads path over rc.  PL_EFORMAT "FILE:LINE: [section] key: ..." naming
 * the first bad line; PL_EIO when the file cannot be read. */
pl_status pl_rigconf_read(pl_rigconf *rc, const char *path, pl_err *err);

#endif

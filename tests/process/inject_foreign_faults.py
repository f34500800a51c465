#!/usr/bin/python3
"""A lab's faults, with numbers drawn at random, injected into the clean foreign
runs (recordings another implementation made), for the foreign scorer to score
as it scores the originals: docs/process.md, "Measured", has what they gave.
Not run by make check (foreign_test.c keeps thirteen such faults in C); it
needs Debian's python3-numpy and python3-scipy.

usage: inject_foreign_faults.py SRC_DIR OUT_DIR SEED COUNT [KINDS]
       ../shared/foreign-runs/score.py OUT_DIR

SRC_DIR holds <stem>.wav and <stem>.truth.json (../shared/foreign-runs, or
fixtures/foreign); CSV_ONLY=1 takes its CSV runs instead (the foreign
logger's format, written back the same way); SWAP=1 swaps the two beams in
the file (the lower beam first).  KINDS, comma separated, drawn with odds 0.6 each (at least
one): V a shaking floor (5-45 Hz, VIB_HZ=LO,HI), L one beam lost (0 V flat,
garbage, at a rail, or at 0 m/s with the
cable's offset and hum; LOSS_KINDS=0123, LOSS_DUR=LO,HI seconds), H mains hum
drifting (DRIFT=LO,HI Hz over the run), C the higher beam clipped, D the higher beam's decoder saturated
(flat at its limit, the cable's noise on top), B both
clipped by one low range, E a beam lost to the end, S a beam lost from the
start into the motion, W a fast strong floor (40-120 Hz), T the prism leaving
the beams (garbage, then 0 V; the truth cut there, L_p at the cut from the
impacts' count).  Faults enter in volts in the order a rig adds them: the
floor's motion, the beam's loss, hum, then the converter's range."""
import json, os, sys
import numpy as np
from scipy.io import wavfile

src, out, seed, count = sys.argv[1], sys.argv[2], int(sys.argv[3]), int(sys.argv[4])
kinds = sys.argv[5].split(",") if len(sys.argv) > 5 else ["L", "C", "V"]
os.makedirs(out, exist_ok=True)
rng = np.random.default_rng(seed)
bases = [f[:-11] for f in sorted(os.listdir(src)) if f.endswith(".truth.json")]
if os.environ.get("CSV_ONLY"):
    bases = [b for b in bases if os.path.exists(os.path.join(src, b + ".csv"))]
else:
    bases = [b for b in bases if os.path.exists(os.path.join(src, b + ".wav"))]


def read_run(T):
    """The run's volts (frames x 2) and rate: a WAV, or a foreign logger's
    CSV (';', decimal commas, a time column in ms, the LDVs in columns 1, 2)."""
    path = os.path.join(src, T["file"])
    if path.endswith(".csv"):
        rows = [l.strip().split(";") for l in open(path, encoding="utf-8")][1:]
        v = np.array([[float(r[1].replace(",", ".")), float(r[2].replace(",", "."))] for r in rows if r[0]])
        return T["fs"], v, [r[3] if len(r) > 3 else "0,0" for r in rows if r[0]]
    fs, x = wavfile.read(path)
    if x.dtype == np.int16:
        v = x / 32768.0
    elif x.dtype == np.int32:
        v = x / 2147483648.0
    else:
        v = x.astype(np.float64)
    return fs, v * T["full_scale_v"], None
for k in range(count):
    b = bases[rng.integers(len(bases))]
    T = json.load(open(os.path.join(src, b + ".truth.json")))
    fs, v, trig = read_run(T)          # volts, columns = channels
    if os.environ.get("SWAP"):         # the beams the other way round in the file
        v = v[:, ::-1].copy()
        T = dict(T); T["h1"], T["h2"] = T["h2"], T["h1"]; T["sign"] = T["sign"][::-1]
    n = v.shape[0]
    t = np.arange(n) / fs
    scale = T.get("ldv_scale", [0.025, 0.025])
    sign = T.get("sign", [1, -1])
    t0, t1 = T["release_t"], T["t_end"]
    # which kinds this run gets: at least one
    pick = [c for c in kinds if rng.random() < 0.6] or [kinds[rng.integers(len(kinds))]]
    desc = []
    fsv = T["full_scale_v"]
    if "V" in pick:
        u = np.zeros(n)
        for j in range(rng.integers(1, 4)):
            f = rng.uniform(*[float(x) for x in os.environ.get("VIB_HZ", "5,45").split(",")]); a = rng.uniform(0.3e-3, 3e-3)
            u += a * np.sin(2 * np.pi * f * t + rng.uniform(0, 2 * np.pi))
            desc.append("V%.1fHz/%.1fmm/s" % (f, a * 1e3))
        for c in range(2):
            v[:, c] += sign[c] * u / scale[c]
    if "L" in pick:
        c = rng.integers(2); d = rng.uniform(*[float(x) for x in os.environ.get("LOSS_DUR", "0.03,0.4").split(",")])
        a = rng.uniform(t0 + 0.3, max(t0 + 0.4, t1 - d - 0.3))
        m = (t >= a) & (t < a + d)
        kind = int(rng.choice([int(c) for c in os.environ.get("LOSS_KINDS", "012")]))
        if kind == 0:      # decoder at 0 V
            v[m, c] = rng.normal(0, 1e-3, m.sum())
        elif kind == 3:    # decoder at 0 m/s: the cable's offset and hum remain
            lead = t < t0 - 0.02
            X = [np.ones(lead.sum())]
            for hk in range(1, 4):
                X += [np.cos(2 * np.pi * 50 * hk * t[lead]), np.sin(2 * np.pi * 50 * hk * t[lead])]
            coef = np.linalg.lstsq(np.array(X).T, v[lead, c], rcond=None)[0]
            Y = [np.ones(m.sum())]
            for hk in range(1, 4):
                Y += [np.cos(2 * np.pi * 50 * hk * t[m]), np.sin(2 * np.pi * 50 * hk * t[m])]
            v[m, c] = np.array(Y).T @ coef
        elif kind == 1:    # speckle garbage
            v[m, c] = rng.normal(0, 0.3, m.sum()) * rng.uniform(0.2, 1)
        else:              # the decoder held at its rail
            v[m, c] = rng.choice([-1, 1]) * fsv
        desc.append("L%d@%.2f+%.2f%s" % (c + 1, a, d, "zgro"[kind]))
    if "P" in pick:   # more 1/f noise, each channel its own (0.5 Hz .. 2 kHz)
        a = rng.uniform(*[float(x) for x in os.environ.get("PINK_MPS", "2e-4,6e-4").split(",")])
        for c in range(2):
            X = np.fft.rfft(rng.normal(0, 1, n)); fr = np.fft.rfftfreq(n, 1 / fs)
            g = np.where((fr >= 0.5) & (fr <= 2000), 1 / np.sqrt(np.maximum(fr, 0.5)), 0)
            x = np.fft.irfft(X * g, n); x *= a / np.std(x)
            v[:, c] += sign[c] * x / scale[c]
        desc.append("P%.0fum/s" % (a * 1e6))
    if "H" in pick:   # mains hum drifting over the run, with its harmonics
        f0 = 50.0 if rng.random() < 0.5 else 60.0
        f0 += rng.uniform(-0.15, 0.15); dr = rng.uniform(*[float(x) for x in os.environ.get("DRIFT", "-0.3,0.3").split(",")])
        A = rng.uniform(0.003, 0.02); T_ = t[-1]
        ph = 2 * np.pi * ((f0 - dr / 2) * t + 0.5 * dr / T_ * t * t) + rng.uniform(0, 6.3)
        hum = A * np.sin(ph) + 0.3 * A * np.sin(3 * ph + 1) + 0.15 * A * np.sin(2 * ph + 2)
        v[:, 0] += hum; v[:, 1] += hum * rng.uniform(0.8, 1.2)
        desc.append("H%.2f%+.2fHz/%.0fmV" % (f0, dr, A * 1e3))
    if "C" in pick:
        m1 = np.max(np.abs(v[:, 0])); m2 = np.max(np.abs(v[:, 1]))
        big = 0 if m1 > m2 else 1
        lo, hi = 1.05 * min(m1, m2), 0.85 * max(m1, m2)
        if hi > lo:
            L = rng.uniform(lo, hi)
            v[:, big] = np.clip(v[:, big], -L, L)
            fsv = L
            desc.append("C%d@%.2fV" % (big + 1, L))
    if "D" in pick:   # the decoder saturates: the beam flat at its limit, the cable's noise on top
        m1 = np.max(np.abs(v[:, 0])); m2 = np.max(np.abs(v[:, 1]))
        big = 0 if m1 > m2 else 1
        L = rng.uniform(0.6, 0.85) * max(m1, m2)
        v[:, big] = np.clip(v[:, big], -L, L)
        sn = rng.uniform(0.5e-3, 3e-3)
        v += rng.normal(0, sn, v.shape)
        desc.append("D%d@%.2fV+%.1fmV" % (big + 1, L, sn * 1e3))
    if "B" in pick:   # a common range low enough that both channels clip at times
        m1 = np.max(np.abs(v[:, 0])); m2 = np.max(np.abs(v[:, 1]))
        L = rng.uniform(0.7, 0.95) * min(m1, m2)
        v = np.clip(v, -L, L); fsv = L
        desc.append("B@%.2fV" % L)
    if "E" in pick:   # a beam lost from some time to the recording's end
        c = rng.integers(2); a = rng.uniform(t0 + 1.0, t1 - 0.5)
        m = t >= a
        v[m, c] = rng.normal(0, 1e-3, m.sum()) if rng.random() < 0.5 else rng.normal(0, 0.3, m.sum())
        desc.append("E%d@%.2f" % (c + 1, a))
    if "S" in pick:   # a beam lost from the recording's start into the motion
        c = rng.integers(2); a = rng.uniform(t0 + 0.1, t0 + 1.0)
        m = t < a
        v[m, c] = rng.normal(0, 1e-3, m.sum())
        desc.append("S%d@%.2f" % (c + 1, a))
    if "W" in pick:   # a strong or fast shaking floor
        u = np.zeros(n)
        for j in range(rng.integers(1, 3)):
            f = rng.uniform(40, 120); a = rng.uniform(1e-3, 5e-3)
            while min(abs(f - 50 * k) for k in (1, 2)) < 3 or min(abs(f - 60 * k) for k in (1, 2)) < 3:
                f = rng.uniform(40, 120)
            u += a * np.sin(2 * np.pi * f * t + rng.uniform(0, 2 * np.pi))
            desc.append("W%.1fHz/%.1fmm/s" % (f, a * 1e3))
        for c in range(2):
            v[:, c] += sign[c] * u / scale[c]
    if "T" in pick:   # the prism leaves the beams: garbage in both, then 0 V
        ti = np.array(T["impact_times"])
        a = rng.uniform(t0 + 2.0, t1 - 0.3)
        g = rng.uniform(0.2, 1.2); R = rng.uniform(0.01, 0.05) / scale[0]
        # L_p at the leave time: the impacts' count, the last slot by its
        # neighbours' length, and the level from the truth's end
        k_end = len(ti) - 1
        frac_end = (t1 - ti[-1]) / (ti[-1] - ti[-2])
        c0 = T["Lp_end"] - k_end - frac_end
        k = np.searchsorted(ti, a) - 1
        lp_a = c0 + k + (a - ti[k]) / (ti[k + 1] - ti[k])
        m = t >= a
        for c in range(2):
            x = np.zeros(m.sum()); al = np.exp(-2 * np.pi * 30 / fs)
            e = rng.normal(0, R * np.sqrt(1 - al * al), m.sum())
            for i in range(1, len(x)):
                x[i] = al * x[i - 1] + e[i]
            if int(g * fs) < len(x):
                x[int(g * fs):] = rng.normal(0, 1e-3, len(x) - int(g * fs))
            v[m, c] = x
        keep = ti < a - 0.003
        T["impact_times"] = list(ti[keep]); T["ratios"] = list(np.array(T["ratios"])[keep])
        T["t_end"] = a; T["Lp_end"] = lp_a
        desc.append("T@%.2f+%.2f/%.0fmV" % (a, g, R * 1e3))
    v = np.clip(v, -fsv, fsv)
    name = "inj%03d-%s" % (seed * 100 + k, b)
    if trig is not None:   # the logger's own format back, its rails as numbers
        with open(os.path.join(out, name + ".csv"), "w", encoding="utf-8") as f:
            f.write("zeit_ms;ldv_oben_V;ldv_unten_V;trigger_V\n")
            for i in range(n):
                f.write(("%.4f;%.6f;%.6f;%s\n" % (1e3 * i / fs, v[i, 0], v[i, 1], trig[i])).replace(".", ",", 3))
        ext = ".csv"
    else:
        wavfile.write(os.path.join(out, name + ".wav"), fs, (v / fsv).astype(np.float32))
        ext = ".wav"
    T2 = dict(T); T2["file"] = name + ext; T2["full_scale_v"] = fsv; T2["injected"] = desc
    json.dump(T2, open(os.path.join(out, name + ".truth.json"), "w"))
    print(name, " ".join(desc))

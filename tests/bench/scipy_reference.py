#!/usr/bin/python3
"""tests/bench/scipy_reference.py - the yardstick of issue 29: what a lab
would write in SciPy instead of `prismlab process`, on the same recording.

    scipy_reference.py RUN.wav [CUTOFF_HZ]

Reads a two-channel 16-bit WAV as `prismlab sim --wav` writes it (the
calibration in its prismlab metadata line, the LIST/INFO comment:
full_scale_v, ldv_scale, sign, h), decodes both channels to downhill
velocities, forms the rotary speed by eq. (4.1) omega = (v1 - v2) / (h1 -
h2), low-passes it forwards and backwards (scipy.signal.filtfilt, a
4th-order Butterworth at CUTOFF_HZ, default 400), integrates it
(cumulative_trapezoid) and finds the impacts as the peaks of the speed's
drop (find_peaks).  It does less than prismlab: no offsets, hum,
drop-outs, release or end, spectra or lattice, and stores nothing; its
peaks are not prismlab's impacts (a 38-edged prism loses about 1 % of
its speed at an impact, within the noise of a plain difference), only
the same pass over the run that finding them takes.

Prints one line: "scipy_reference: impacts=K theta_end=X compute_s=S"
(compute_s: from opening the file to the peaks, without the interpreter's
start and the imports, which the bench's whole-process time includes).
Exit status 2 when numpy or scipy is missing (the bench then skips it).
"""
import struct
import sys
import time

try:
    import numpy as np
    from scipy.integrate import cumulative_trapezoid
    from scipy.io import wavfile
    from scipy.signal import butter, filtfilt, find_peaks
except ImportError as e:        # the bench says so and goes on without it
    print("scipy_reference: %s" % e, file=sys.stderr)
    sys.exit(2)


def metadata(path):
    """The prismlab key=value pairs of the WAV's LIST/INFO comment (ICMT)."""
    with open(path, "rb") as f:
        riff = f.read(12)
        if riff[:4] != b"RIFF" or riff[8:12] != b"WAVE":
            raise ValueError("%s: not a RIFF WAVE file" % path)
        while True:
            head = f.read(8)
            if len(head) < 8:
                break
            tag, size = head[:4], struct.unpack("<I", head[4:])[0]
            if tag != b"LIST":
                f.seek(size + (size & 1), 1)
                continue
            body = f.read(size + (size & 1))
            at = 4                  # past the list type ('INFO')
            while at + 8 <= len(body):
                sub, n = body[at:at + 4], struct.unpack("<I", body[at + 4:at + 8])[0]
                text = body[at + 8:at + 8 + n].split(b"\0")[0].decode()
                if sub == b"ICMT" and text.startswith("prismlab "):
                    return dict(kv.split("=", 1) for kv in text.split()[1:])
                at += 8 + n + (n & 1)
    raise ValueError("%s: no prismlab metadata line" % path)


def main():
    if len(sys.argv) < 2:
        print("usage: scipy_reference.py RUN.wav [CUTOFF_HZ]", file=sys.stderr)
        return 1
    cutoff = float(sys.argv[2]) if len(sys.argv) > 2 else 400.0
    t0 = time.perf_counter()
    meta = metadata(sys.argv[1])
    rate, codes = wavfile.read(sys.argv[1])
    per_code = float(meta["full_scale_v"]) / 32768.0
    scale = [float(x) for x in meta["ldv_scale"].split(",")]
    sign = [int(x) for x in meta["sign"].split(",")]
    h1, h2 = (float(x) for x in meta["h"].split(","))
    v1 = codes[:, 0] * (per_code * scale[0] * sign[0])
    v2 = codes[:, 1] * (per_code * scale[1] * sign[1])
    omega = (v1 - v2) / (h1 - h2)                        # eq. (4.1)
    b, a = butter(4, cutoff / (0.5 * rate))
    omega_f = filtfilt(b, a, omega)
    theta = cumulative_trapezoid(omega_f, dx=1.0 / rate, initial=0)
    # an impact is a sudden loss of speed: peaks of -d omega, at least
    # 2 ms apart and above 5 standard deviations of the difference
    drop = -np.diff(omega_f)
    peaks, _ = find_peaks(drop, height=5 * drop.std(), distance=int(0.002 * rate))
    dt = time.perf_counter() - t0
    print("scipy_reference: impacts=%d theta_end=%.6g compute_s=%.3f"
          % (len(peaks), theta[-1], dt))
    return 0


if __name__ == "__main__":
    sys.exit(main())

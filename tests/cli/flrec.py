# SPDX-License-Identifier: Apache-2.0
"""Reads a FrictionLab recording (recording.flrec, docs/recording.md) for the shell tests:
read(path) -> (header dict, list of frames), each frame a dict of its fields and arrays."""
import json
import struct


def read(path):
    b = open(path, "rb").read()
    if b[:8] != b"FLREC01\n":
        raise ValueError(f"{path}: not a recording")
    hl = struct.unpack_from("<I", b, 8)[0]
    h = json.loads(b[12:12 + hl])
    ver = h.get("version", 1)
    fixed, bs = (64, 13) if ver >= 2 else (56, 7)
    nb = len(h["bodies"])
    off, frames = 12 + hl, []
    while off + 8 <= len(b):
        tag, ln = struct.unpack_from("<II", b, off)
        if tag != 0x314D5246 or off + 8 + ln > len(b):
            break
        p = off + 8
        solver, step, t, iters, reason, residual, merit = struct.unpack_from("<iidiidd", b, p)
        nv, nc = struct.unpack_from("<ii", b, p + 44)
        fr = dict(solver=solver, step=step, t=t, iters=iters, reason=reason, residual=residual,
                  merit=merit, energy=struct.unpack_from("<d", b, p + 56)[0] if ver >= 2 else None)
        a = p + fixed
        fr["pose"] = struct.unpack_from(f"<{bs * nb}f", b, a)
        a += 4 * bs * nb
        fr["vert"] = struct.unpack_from(f"<{3 * nv}f", b, a)
        a += 12 * nv
        fr["vm"] = fr["eps"] = ()
        if ver >= 2:
            fr["vm"] = struct.unpack_from(f"<{nv}f", b, a)
            fr["eps"] = struct.unpack_from(f"<{nv}f", b, a + 4 * nv)
            a += 8 * nv
        fr["contacts"] = []
        for _ in range(nc):
            f = struct.unpack_from("<10f", b, a)
            i = struct.unpack_from("<iiI", b, a + 40)
            fr["contacts"].append(dict(point=list(f[0:3]), normal=list(f[3:6]), impulse=list(f[6:9]),
                                       phi=f[9], sides=[i[0], i[1]], sliding=bool(i[2] & 1)))
            a += 52
        frames.append(fr)
        off += 8 + ln
    return h, frames

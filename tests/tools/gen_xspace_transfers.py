#!/usr/bin/env python3
"""Writes a large XSpace with the TPU host-offload pattern, for timing the transfer derivation.

Each plane (a TPU) runs module `jit_step` again and again: three copy-starts from host memory
S(5) at the start, a chain of fusions, a copy-done before each consumer, copies back to S(5);
plus an Async XLA Ops line with the in-flight copies. Events carry the stats XProf writes
(device_offset_ps, device_duration_ps), metadata the HLO text.

usage: gen_xspace_transfers.py OUT.xplane.pb TARGET_MB [PLANES]
"""
import sys


def varint(v):
    out = bytearray()
    while v >= 0x80:
        out.append((v & 0x7F) | 0x80)
        v >>= 7
    out.append(v)
    return bytes(out)


def field_int(n, v):
    return varint(n << 3) + varint(v)


def field_bytes(n, b):
    if isinstance(b, str):
        b = b.encode()
    return varint((n << 3) | 2) + varint(len(b)) + b


SHAPE = "f32[1024,1024]{1,0:T(8,128)}"
HOST = "f32[1024,1024]{1,0:T(8,128)S(5)}"
FUSIONS = 60


def hlo_names():
    meta = {}
    mid = 1
    def add(display, text):
        nonlocal mid
        meta[display] = (mid, text)
        mid += 1
    for k in range(3):
        s = "copy-start" + ("" if k == 0 else ".%d" % k)
        d = "copy-done" + ("" if k == 0 else ".%d" % k)
        add(s, "%%%s = (%s, %s, u32[]{:S(2)}) copy-start(%s %%param.%d)" % (s, SHAPE, HOST, HOST, k))
        add(d, "%%%s = %s copy-done((%s, %s, u32[]{:S(2)}) %%%s)" % (d, SHAPE, SHAPE, HOST, s))
    prev = "copy-done"
    for f in range(FUSIONS):
        name = "fusion.%d" % f
        add(name, "%%%s = %s fusion(%s %%%s), kind=kLoop, calls=%%fused_computation.%d" % (name, SHAPE, SHAPE, prev, f))
        prev = name
    for k in range(3, 6):
        s, d = "copy-start.%d" % k, "copy-done.%d" % k
        add(s, "%%%s = (%s, %s, u32[]{:S(2)}) copy-start(%s %%fusion.%d)" % (s, HOST, SHAPE, SHAPE, FUSIONS - 1 - k))
        add(d, "%%%s = %s copy-done((%s, %s, u32[]{:S(2)}) %%%s)" % (d, HOST, HOST, SHAPE, s))
    add("jit_step", "jit_step(1234)")
    add("async-copy", "async-copy")
    return meta


def event(mid, off_ps, dur_ps, stats=b""):
    return field_bytes(4, field_int(1, mid) + field_int(2, off_ps) + field_int(3, dur_ps) + stats)


def stat_int(mid, v):
    return field_bytes(4, field_int(1, mid) + field_int(3, v))


def main(out, target_mb, planes):
    meta = hlo_names()
    per_plane = target_mb * 1_000_000 // planes
    with open(out, "wb") as sink:
        for p in range(planes):
            plane = bytearray(field_int(1, p + 1) + field_bytes(2, "/device:TPU:%d" % p))
            for display, (mid, text) in meta.items():
                value = field_int(1, mid) + field_bytes(2, text) + field_bytes(4, display)
                plane += field_bytes(4, field_int(1, mid) + field_bytes(2, value))
            for sid, name in ((1, "device_offset_ps"), (2, "device_duration_ps")):
                value = field_int(1, sid) + field_bytes(2, name)
                plane += field_bytes(5, field_int(1, sid) + field_bytes(2, value))
            modules, ops, inflight = bytearray(), bytearray(), bytearray()
            t = 0
            run = 0
            us = 1_000_000  # ps
            while len(ops) + len(modules) + len(inflight) < per_plane:
                start = t
                def op(name, dur):
                    nonlocal t
                    mid = meta[name][0]
                    ops.extend(event(mid, t, dur, stat_int(1, t) + stat_int(2, dur)))
                    t += dur + 1000
                for k in range(3):
                    op("copy-start" + ("" if k == 0 else ".%d" % k), 5000)
                # host -> HBM queue: 40 us each
                op("copy-done", 40 * us)
                first = t
                for n in range(FUSIONS):
                    if n == 20:
                        op("copy-done.1", 35 * us)
                    if n == 40:
                        op("copy-done.2", 30 * us)
                    op("fusion.%d" % n, 2 * us)
                    for k in (3, 4, 5):
                        if n == FUSIONS - 1 - k:
                            op("copy-start.%d" % k, 2000)
                for k in range(3, 6):
                    op("copy-done.%d" % k, 10 * us if k == 3 else 3000)
                modules.extend(event(meta["jit_step"][0], start, t - start, stat_int(1, start)))
                inflight.extend(event(meta["async-copy"][0], start, first - start))
                run += 1
                t += 5 * us
            for lid, name, body in ((1, "XLA Modules", modules), (2, "XLA Ops", ops),
                                    (3, "Async XLA Ops", inflight)):
                plane += field_bytes(3, field_int(1, lid) + field_bytes(2, name) + field_int(3, 0) + bytes(body))
            sink.write(field_bytes(1, bytes(plane)))
            print("plane", p, "runs", run, file=sys.stderr)


if __name__ == "__main__":
    main(sys.argv[1], int(sys.argv[2]), int(sys.argv[3]) if len(sys.argv) > 3 else 4)

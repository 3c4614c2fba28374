#!/usr/bin/env python3
"""Writes two small XSpaces of one program for the demo workspace's before/after of transfers.

`jit_train_step` runs 8 times on /device:TPU:0. Each run offloads three parameters to host
memory S(5) and brings them back with copy-start/copy-done (the host-offload pattern of
../shared/samples/xprof/tpu_inference_2.xplane.pb): the copies queue on one link at 25 GB/s,
fusions wait for them. BEFORE copies f32 parameters (4, 8 and 4 MiB); AFTER copies them as bf16
(half the bytes), so each wait shrinks by what the link no longer carries.

usage: gen_xspace_offload_pair.py BEFORE.xplane.pb AFTER.xplane.pb
"""
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))


from gen_xspace_transfers import field_bytes, field_int  # the wire helpers, shared


LINK_BYTES_PER_NS = 25.0  # 25 GB/s host -> HBM
FUSION_NS = [30_000, 45_000, 25_000, 60_000]


def write(path, dtype, elements):
    width = {"f32": 4, "bf16": 2}[dtype]
    meta, lines = {}, {}
    plane = bytearray(field_int(1, 1) + field_bytes(2, "/device:TPU:0"))

    def event(line, display, text, start_ns, dur_ns):
        nonlocal plane
        if (display, text) not in meta:
            mid = len(meta) + 10
            value = field_int(1, mid) + field_bytes(2, text)
            if display != text:
                value += field_bytes(4, display)
            plane += field_bytes(4, field_int(1, mid) + field_bytes(2, value))
            meta[(display, text)] = mid
        ev = field_int(1, meta[(display, text)]) + field_int(2, start_ns * 1000)
        ev += field_int(3, dur_ns * 1000)
        lines.setdefault(line, bytearray()).extend(field_bytes(4, ev))

    t = 0
    for run in range(8):
        start = t
        link_free = t
        done = []
        for k, n in enumerate(elements):
            shape = "%s[%d]" % (dtype, n)
            name = "copy-start" + ("" if k == 0 else ".%d" % k)
            text = ("%%%s = (%s{0}, %s{0:S(5)}, u32[]{:S(2)}) copy-start(%s{0:S(5)} %%param.%d)"
                    % (name, shape, shape, shape, k))
            event("XLA Ops", name, text, t, 1_000)
            begin = max(link_free, t)
            link_free = begin + int(n * width / LINK_BYTES_PER_NS)
            done.append((name, shape, link_free))
            t += 1_000
        for k, (name, shape, complete) in enumerate(done):
            fusion = "fusion.%d" % k
            event("XLA Ops", fusion, "%%%s = f32[64]{0} fusion(f32[64]{0} %%param.9), kind=kLoop"
                  % fusion, t, FUSION_NS[k])
            t += FUSION_NS[k] + 500
            wait = name.replace("start", "done")
            text = ("%%%s = %s{0} copy-done((%s{0}, %s{0:S(5)}, u32[]{:S(2)}) %%%s)"
                    % (wait, shape, shape, shape, name))
            end = max(t + 200, complete)
            event("XLA Ops", wait, text, t, end - t)
            t = end + 500
            use = "fusion.%d" % (k + 10)
            event("XLA Ops", use, "%%%s = f32[64]{0} fusion(%s{0} %%%s), kind=kLoop"
                  % (use, shape, wait), t, 20_000)
            t += 20_500
        event("XLA Modules", "jit_train_step(1)", "jit_train_step(1)", start, t - start)
        t += 50_000
    out = bytearray(plane)
    for i, (name, events) in enumerate(sorted(lines.items()), start=1):
        out += field_bytes(3, field_int(1, i) + field_bytes(2, name) + field_int(3, 0) + events)
    with open(path, "wb") as f:
        f.write(field_bytes(1, bytes(out)))


if __name__ == "__main__":
    elements = [1 << 20, 1 << 21, 1 << 20]
    write(sys.argv[1], "f32", elements)
    write(sys.argv[2], "bf16", elements)

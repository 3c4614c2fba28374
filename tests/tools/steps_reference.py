#!/usr/bin/env python3
"""Independent step breakdown of a PyTorch/Kineto Chrome trace (Python 3 stdlib only).

Reads the JSON (or .json.gz) directly, never through Stallscope, and applies the rules of
docs/steps.md with the trace's own fields where Stallscope works from names and tracks:
device activities are the events whose `cat` is kernel / gpu_memcpy / gpu_memset, grouped by
pid (the GPU); launches pair a kernel with the runtime call of the same `correlation`; host
events are every other complete event. test_step_analysis compares its figures with
Stallscope's on the real samples.

Usage: steps_reference.py TRACE.json[.gz]   prints one JSON line per (step, device)
"""
import gzip
import json
import sys
from decimal import Decimal

CATS = ["compute", "communication", "memcpy", "memset", "host_wait", "input", "idle"]
GEMM, ATTN, OTHER, COMM, H2D, D2H, D2D, PEER, OCOPY, MEMSET = range(10)
COLLECTIVES = ["nccl", "rccl", "allreduce", "all_reduce", "all-reduce", "allgather",
               "all_gather", "all-gather", "reducescatter", "reduce_scatter", "reduce-scatter",
               "alltoall", "all_to_all", "all-to-all", "collective-permute",
               "collectivepermute", "multimem", "cross_device_reduce"]


def ns(value):
    return int(Decimal(value) * 1000)  # µs -> whole ns, truncated like the importer


def has_conv(n):
    at = n.find("conv")
    while at >= 0:
        nxt = n[at + 4] if at + 4 < len(n) else ""
        if nxt == "o" or nxt == "_" or nxt.isdigit():
            return True
        at = n.find("conv", at + 1)
    return False


def kernel_class(name):
    n = name.lower()
    if any(c in n for c in COLLECTIVES) or n.startswith(("comm_", "send", "recv")):
        return COMM
    if any(k in n for k in ("flash", "attention", "attn", "fmha", "sdpa")):
        return ATTN
    if (any(k in n for k in ("gemm", "matmul", "cublas", "cutlass", "xmma", "wgmma", "hmma",
                             "nvjet", "fprop", "dgrad", "wgrad"))
            or n.startswith("dot") or has_conv(n)):
        return GEMM
    return OTHER


def copy_class(name):
    n = name.lower()
    if "htod" in n or "h2d" in n:
        return H2D
    if "dtoh" in n or "d2h" in n:
        return D2H
    if "ptop" in n or "p2p" in n or "peer" in n:
        return PEER
    if "dtod" in n or "d2d" in n:
        return D2D
    return OCOPY


def host_class(name):
    """0 input, 1 sync, 2 runtime, 3 operator, 4 python, 5 other; None: takes no part."""
    if name.startswith(("ProfilerStep#", "PyTorch Profiler", "Iteration Start")):
        return None
    n = name.lower()
    if any(k in n for k in ("dataloader", "iteratorgetnext", "iterator::", "infeed", "tf_data",
                            "input_pipeline", "input pipeline")):
        return 0
    if "Synchronize" in name or name in ("cudaMemcpy", "hipMemcpy", "aten::item",
                                         "aten::_local_scalar_dense"):
        return 1
    if (n.startswith(("cuda", "hip", "hsa_"))
            or (len(name) > 2 and name.startswith("cu") and name[2].isupper())):
        return 2
    if "::" in n or name.startswith("Optimizer."):
        return 3
    if ".py(" in n or name.startswith(("nn.Module:", "<built-in", "torch/")):
        return 4
    return 5


def merged(intervals):
    out = []
    for s, e in sorted(intervals):
        if e <= s:
            continue
        if out and s <= out[-1][1]:
            out[-1][1] = max(out[-1][1], e)
        else:
            out.append([s, e])
    return out


def active(intervals, t):
    return any(s <= t < e for s, e in intervals)


def main(path):
    opener = gzip.open if path.endswith(".gz") else open
    with opener(path, "rt") as f:
        doc = json.load(f, parse_float=Decimal)
    events = doc["traceEvents"] if isinstance(doc, dict) else doc
    complete = [e for e in events if e.get("ph") == "X" and "ts" in e]
    device_cats = ("kernel", "gpu_memcpy", "gpu_memset")
    device_threads = {(e["pid"], e["tid"]) for e in complete if e.get("cat") in device_cats}
    runtime_by_corr = {}
    for e in complete:
        if e.get("cat") in ("cuda_runtime", "cuda_driver"):
            c = (e.get("args") or {}).get("correlation")
            if c is not None:
                runtime_by_corr[c] = ns(e["ts"])

    # Trace range: every event with a time (slices to their end).
    times = []
    for e in events:
        if "ts" in e and e.get("ph") != "M":
            times.append(ns(e["ts"]))
            if e.get("ph") == "X":
                times.append(ns(Decimal(e["ts"]) + Decimal(e.get("dur", 0))))
    first, last = min(times), max(times)

    devices = {}
    host = [[] for _ in range(6)]
    steps = []
    for e in complete:
        start = ns(e["ts"])
        end = ns(Decimal(e["ts"]) + Decimal(e.get("dur", 0)))
        key = (e["pid"], e["tid"])
        cat = e.get("cat")
        if cat in device_cats:
            if end <= start:
                continue
            cls = MEMSET if cat == "gpu_memset" else (
                copy_class(e["name"]) if cat == "gpu_memcpy" else kernel_class(e["name"]))
            corr = (e.get("args") or {}).get("correlation")
            devices.setdefault(e["pid"], []).append((start, end, cls, runtime_by_corr.get(corr)))
        elif key not in device_threads:
            if e["name"].startswith("ProfilerStep#"):
                steps.append((start, end, e["name"]))
            c = host_class(e["name"])
            if c is not None:
                host[c].append((start, end))
    host = [merged(h) for h in host]
    runtime = merged(host[1] + host[2])
    steps.sort()
    if not steps:
        steps = [(first, last, "whole trace")]
    lo = min(first, steps[0][0])
    hi = max([last] + [s[1] for s in steps])

    for pid in sorted(devices):
        acts = devices[pid]
        # Every boundary of an activity, a host interval or a step cuts the timeline.
        cuts = {lo, hi}
        for s, e, _, _ in acts:
            cuts.update((max(lo, min(hi, s)), max(lo, min(hi, e))))
        for lst in (host[0], runtime):
            for s, e in lst:
                cuts.update((max(lo, min(hi, s)), max(lo, min(hi, e))))
        for s, e, _ in steps:
            cuts.update((s, e))
        cuts = sorted(cuts)
        starts = sorted(acts)
        # Elementary pieces: the active classes by sweeping start/end events.
        ev = sorted([(s, 1, i) for i, (s, _, _, _) in enumerate(acts)] +
                    [(e, -1, i) for i, (_, e, _, _) in enumerate(acts)])
        counts = [0] * 10
        k = 0
        pieces = []  # (a, b, top class or None, compute?, comm?, copy?)
        for a, b in zip(cuts, cuts[1:]):
            while k < len(ev) and ev[k][0] <= a:
                counts[acts[ev[k][2]][2]] += ev[k][1]
                k += 1
            top = next((c for c in range(10) if counts[c] > 0), None)
            pieces.append((a, b, top, sum(counts[:3]) > 0, counts[COMM] > 0,
                           sum(counts[H2D:OCOPY + 1]) > 0))
        # Idle stretches: late launch if the activity ending them was launched after they began.
        late = {}
        gap_start = None
        for a, b, top, *_ in pieces:
            if top is None and gap_start is None:
                gap_start = a
            if top is not None and gap_start is not None:
                launches = [l for s, _, _, l in starts if s == a and l is not None]
                late[gap_start] = bool(launches) and min(launches) > gap_start
                gap_start = None
        gap_start = None
        labelled = []
        for a, b, top, comp, comm, copy in pieces:
            if top is None:
                if gap_start is None:
                    gap_start = a
                if active(host[0], a):
                    cat = "input"
                elif active(runtime, a) or late.get(gap_start, False):
                    cat = "host_wait"
                else:
                    cat = "idle"
            else:
                gap_start = None
                cat = ("compute" if top <= OTHER else "communication" if top == COMM else
                       "memset" if top == MEMSET else "memcpy")
            labelled.append((a, b, top, cat, comp, comm, copy))
        for index, (s0, s1, name) in enumerate(steps):
            out = {c: 0 for c in CATS}
            split = {"gemm": 0, "attention": 0, "other": 0}
            comm_total = comm_hidden = 0
            for a, b, top, cat, comp, comm, copy in labelled:
                a, b = max(a, s0), min(b, s1)
                if b <= a:
                    continue
                out[cat] += b - a
                if top in (GEMM, ATTN, OTHER):
                    split[["gemm", "attention", "other"][top]] += b - a
                if comm:
                    comm_total += b - a
                    comm_hidden += (b - a) if comp else 0
            kernels = sum(1 for s, _, _, _ in acts if s0 <= s < s1)
            lat = sorted(s - l for s, _, _, l in acts if l is not None and s >= l)
            p50 = lat[max(1, -(-len(lat) // 2)) - 1] if lat else 0
            print(json.dumps({"step": index, "device": pid, "duration": s1 - s0,
                              "breakdown": out, "compute_split": split,
                              "communication_total": comm_total,
                              "communication_hidden": comm_hidden, "kernels": kernels,
                              "launches": len(lat), "launch_p50": p50}))


if __name__ == "__main__":
    main(sys.argv[1])

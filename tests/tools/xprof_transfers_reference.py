#!/usr/bin/env python3
"""Independent reference figures for the transfer analysis of an XProf XSpace.

Reads the .xplane.pb with its own protobuf wire decoder (stdlib only; never Stallscope) and
prints, as JSON, what tests/core/test_transfers.cpp expects of the TPU sample:
  - per device: module runs with async copies, transfers, bytes, stall per copy-done name;
  - per link (device, source space -> destination space): the fitted bandwidth, by the rule the
    model states (DOMAIN §1 FIFO link): the median over queued completions of bytes / (completion
    - previous completion on the link), with a completion measured only when its wait blocked
    (copy-done lasting >= 1 us);
  - one run in detail (TPU:0, the third jit_f run).
Times follow the trace store's convention: a start is floor(ps / 1000) ns, an end is
ceil(ps / 1000) ns of the line's timestamp_ns + offset_ps (+ duration_ps).

usage: xprof_transfers_reference.py FILE.xplane.pb
"""
import json
import re
import statistics
import sys
import zlib


def varint(b, i):
    r = s = 0
    while True:
        c = b[i]
        i += 1
        r |= (c & 0x7F) << s
        s += 7
        if c < 0x80:
            return r, i


def fields(b):
    i = 0
    while i < len(b):
        tag, i = varint(b, i)
        num, wt = tag >> 3, tag & 7
        if wt == 0:
            v, i = varint(b, i)
        elif wt == 1:
            v, i = b[i:i + 8], i + 8
        elif wt == 5:
            v, i = b[i:i + 4], i + 4
        elif wt == 2:
            n, i = varint(b, i)
            v, i = b[i:i + n], i + n
        else:
            raise ValueError("wire type %d" % wt)
        yield num, wt, v


def planes(path):
    data = open(path, "rb").read()
    for num, _, v in fields(data):
        if num == 1:
            yield plane(v)


def plane(b):
    p = {"name": "", "lines": [], "meta": {}}
    for num, _, v in fields(b):
        if num == 2:
            p["name"] = v.decode()
        elif num == 3:
            p["lines"].append(v)
        elif num == 4:
            key = value = None
            for n2, _, v2 in fields(v):
                if n2 == 1:
                    key = v2
                elif n2 == 2:
                    value = v2
            name = display = ""
            for n3, _, v3 in fields(value):
                if n3 == 2:
                    name = v3.decode()
                elif n3 == 4:
                    display = v3.decode()
            p["meta"][key] = (name, display)
    lines = {}
    for lb in p["lines"]:
        line = {"name": "", "ts": 0, "events": []}
        for num, _, v in fields(lb):
            if num == 2:
                line["name"] = v.decode()
            elif num == 3:
                line["ts"] = v
            elif num == 4:
                ev = {"mid": 0, "off": 0, "dur": 0}
                for n2, _, v2 in fields(v):
                    if n2 == 1:
                        ev["mid"] = v2
                    elif n2 == 2:
                        ev["off"] = v2
                    elif n2 == 3:
                        ev["dur"] = v2
                line["events"].append(ev)
        lines[line["name"]] = line
    p["lines"] = lines
    return p


SIZES = {"f32": 4, "s32": 4, "u32": 4, "bf16": 2, "f16": 2, "f64": 8, "s64": 8, "u64": 8,
         "pred": 1, "s8": 1, "u8": 1}


def array_bytes(text):
    m = re.match(r"\s*([a-z0-9]+)\[([^\]]*)\]", text)
    n = 1
    for d in m.group(2).split(","):
        if d.strip():
            n *= int(d.strip())
    return n * SIZES[m.group(1)]


def space_of(array_text):
    m = re.search(r":[^}]*?(?<![A-Za-z])S\((\d+)\)", array_text)
    return int(m.group(1)) if m else 0


def main(path):
    out = {"devices": {}, "links": {}}
    for p in planes(path):
        if "XLA Ops" not in p["lines"]:
            continue
        ops_line = p["lines"]["XLA Ops"]
        ts = ops_line["ts"] * 1000
        ops = []
        for e in ops_line["events"]:
            name, display = p["meta"][e["mid"]]
            start_ps = ts + e["off"]
            end_ps = start_ps + e["dur"]
            ops.append((start_ps, end_ps, display, name))
        ops.sort(key=lambda o: (o[0], o[1]))  # program order: shorter first at one start
        mods = sorted(((ts + e["off"], ts + e["off"] + e["dur"], p["meta"][e["mid"]][0])
                       for e in p["lines"]["XLA Modules"]["events"]))
        dev = {"runs": 0, "transfers": 0, "bytes": 0, "stall_ns": {}, "run_ns": 0,
               "total_stall_ns": 0}
        link_obs = {}
        detail = None
        jit_f_runs = 0
        for (ms, me, mname) in mods:
            run = [o for o in ops if ms <= o[0] < me]
            starts = {o[2]: o for o in run if " copy-start(" in o[3]}
            dones = [o for o in run if " copy-done(" in o[3]]
            if not starts:
                continue
            dev["runs"] += 1
            dev["run_ns"] += -(-me // 1000) - ms // 1000
            jit_f_runs += 1
            transfers = []
            for d in dones:
                start_name = re.search(r"%([\w.\-]+)\)\s*$", d[3].split(" copy-done(", 1)[1]).group(1)
                s = starts[start_name]
                # copy-start's result: (destination, source, context)
                tuple_text = s[3].split(" = ", 1)[1]
                elems = re.findall(r"[a-z0-9]+\[[^\]]*\]\{[^}]*\}", tuple_text.split(" copy-start(")[0])
                nbytes = array_bytes(elems[0])
                link = (p["name"], "S(%d)->S(%d)" % (space_of(elems[1]), space_of(elems[0])))
                wait = d[0] // 1000
                wait_end = -(-d[1] // 1000)
                stall = wait_end - wait
                blocked = stall >= 1000
                transfers.append({"name": start_name, "issue": s[0] // 1000, "wait": wait,
                                  "wait_end": wait_end, "blocked": blocked, "bytes": nbytes,
                                  "link": link})
                dev["transfers"] += 1
                dev["bytes"] += nbytes
                if blocked:
                    dev["stall_ns"][d[2]] = dev["stall_ns"].get(d[2], 0) + stall
                    dev["total_stall_ns"] += stall
            # Link fit observations: queued completions.
            for link in {t["link"] for t in transfers}:
                on = sorted((t for t in transfers if t["link"] == link), key=lambda t: t["issue"])
                for prev, t in zip(on, on[1:]):
                    if t["blocked"] and prev["blocked"] and prev["wait_end"] > t["issue"] \
                            and t["wait_end"] > prev["wait_end"]:
                        link_obs.setdefault(link, []).append(
                            (t["wait_end"] - prev["wait_end"]) / t["bytes"])
            if p["name"].endswith("TPU:0") and jit_f_runs == 3:
                detail = {"start": ms // 1000, "end": -(-me // 1000),
                          "transfers": [{k: t[k] for k in ("name", "issue", "wait", "wait_end",
                                                          "bytes")} | {"link": t["link"][1]}
                                        for t in transfers]}
        out["devices"][p["name"]] = dev
        if detail:
            out["tpu0_run3"] = detail
        for link, obs in link_obs.items():
            out["links"]["%s %s" % link] = {"queued_observations": len(obs),
                                            "fitted_gbps": 1.0 / statistics.median(obs)}
    json.dump(out, sys.stdout, indent=1, sort_keys=True)
    print()


if __name__ == "__main__":
    main(sys.argv[1])

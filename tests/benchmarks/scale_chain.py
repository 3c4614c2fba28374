#!/usr/bin/env python3
"""The whole chain at 10^6, 10^7 and 10^8 slices (issue 33): generate a Kineto-like trace
(tests/tools/gen_kineto_steps.py), import it, then steps, transfers (`dma`), the critical path
and a first frame (`render timeline` of the whole trace at 1280x800, which waits for every flow
arrow), each a separate process timed with /usr/bin/time (wall seconds, peak RSS); then the
window's first frame (bench_trace_timeline: open the profile, lay out its tracks, prepare and
paint the whole range at 1920x1080; the flows are read beside it), its time and the RSS then.
With --kill, before the JSON is deleted, the same trace is imported again into the workspace and
killed (SIGKILL) halfway through the first import's time, then again cancelled (SIGINT, the
command line's cancel): each time the workspace must still hold exactly the one profile, with
every table's row count and the profile's metadata as before and an `ok` quick_check.
The generated JSON is deleted as soon as it is no longer needed; the workspace after the last
stage.

Usage: scale_chain.py [--sizes 1e6,1e7,1e8] [--work DIR] [--binary PATH] [--csv F] [--svg F]
                      [--skip STAGE@SIZE]...   (e.g. "critical path@1e8": not run, shown as -)
                      [--kill]
Prints a Markdown table; --csv writes the figures, --svg a log-log plot of time vs slices.
"""
import argparse
import csv
import os
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
STAGES = ["generate", "import", "steps", "transfers", "critical path", "first frame",
          "window"]
BENCH = os.path.join(ROOT, "build/tests/benchmarks/bench_trace_timeline")


def store_state(store):
    """What an interrupted import must leave as it was: the profiles, every table's row count
    (the slice chunks and blobs included) and an ok quick_check."""
    import sqlite3
    db = sqlite3.connect(f"file:{store}?mode=ro", uri=True)
    tables = [r[0] for r in db.execute("SELECT name FROM sqlite_master WHERE type = 'table'")]
    state = {t: db.execute(f'SELECT count(*) FROM "{t}"').fetchone()[0] for t in tables}
    state["profiles"] = db.execute("SELECT id, name, metadata FROM profiles").fetchall()
    state["quick_check"] = db.execute("PRAGMA quick_check").fetchone()[0]
    db.close()
    return state


def interrupted_imports(binary, store, trace, seconds, env):
    """Imports `trace` again and stops it halfway (SIGKILL, then SIGINT): nothing may change."""
    import signal
    before = store_state(store)
    for sig in (signal.SIGKILL, signal.SIGINT):
        proc = subprocess.Popen([binary, "--store", store, "import", trace],
                                stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, env=env)
        time.sleep(seconds / 2)
        proc.send_signal(sig)
        _, err = proc.communicate()
        # A command-line import writes large inputs directly (a rollback journal, not the WAL):
        # killed, it leaves the journal for the next writable open to roll back, which the
        # user's next command is. A read-only reader before it is refused (the journal is hot).
        subprocess.run([binary, "--store", store, "list"], stdout=subprocess.DEVNULL, check=True,
                       env=env)
        after = store_state(store)
        outcome = "same" if after == before else "CHANGED"
        print(f"  import stopped by {signal.Signals(sig).name} after {seconds / 2:.0f} s "
              f"(exit {proc.returncode}): workspace {outcome}, quick_check "
              f"{after['quick_check']}", flush=True)
        if after != before:
            sys.exit(f"an interrupted import changed the workspace:\n{err.decode()[-1000:]}")


def window_first_frame(store, env):
    """bench_trace_timeline's open -> first frame (seconds) and its RSS then (MB)."""
    out = subprocess.run([BENCH, "--store", store, "--profile", "1", "--frames", "1"],
                         capture_output=True, text=True, env=env).stdout
    import re
    m = re.search(r"open -> first frame: (\d+) ms \(RSS (\d+) MB\)", out)
    if not m:
        sys.exit(f"bench_trace_timeline gave no first frame:\n{out[-1000:]}")
    return int(m.group(1)) / 1000, float(m.group(2))


def timed(cmd, env=None):
    """Runs cmd under /usr/bin/time; returns (seconds, peak MB)."""
    fmt = "@@%e %M"
    started = time.time()
    proc = subprocess.run(["/usr/bin/time", "-f", fmt] + cmd, stdout=subprocess.DEVNULL,
                          stderr=subprocess.PIPE, text=True, env=env)
    if proc.returncode != 0:
        sys.exit(f"{' '.join(cmd)} failed ({proc.returncode}):\n{proc.stderr[-2000:]}")
    line = [l for l in proc.stderr.splitlines() if l.startswith("@@")][-1]
    seconds, kb = line[2:].split()
    return float(seconds) if float(seconds) > 0 else time.time() - started, int(kb) / 1024


def run_size(slices, work, binary, skipped=(), kill=False):
    trace = os.path.join(work, f"scale_{slices}.json")
    store = os.path.join(work, f"scale_{slices}.sqlite")
    for path in (store, store + "-wal", store + "-shm"):
        if os.path.exists(path):
            os.remove(path)
    env = dict(os.environ, QT_QPA_PLATFORM="offscreen")
    row = {"slices": slices}
    row["generate"] = timed([sys.executable, os.path.join(ROOT, "tests/tools/gen_kineto_steps.py"),
                             trace, str(slices)])
    row["json_gb"] = os.path.getsize(trace) / 1e9
    row["import"] = timed([binary, "--store", store, "import", trace], env)
    if kill:
        interrupted_imports(binary, store, trace, row["import"][0], env)
    os.remove(trace)  # no 19 GB file kept longer than needed
    row["steps"] = timed([binary, "--store", store, "steps", "1", "--json"], env)
    row["transfers"] = timed([binary, "--store", store, "dma", "1", "--json"], env)
    row["critical path"] = (
        (0.0, 0.0) if "critical path" in skipped
        else timed([binary, "--store", store, "critical-path", "1", "--json"], env))
    png = os.path.join(work, f"scale_{slices}.png")
    row["first frame"] = timed([binary, "--store", store, "render", "timeline", "1", "--out", png,
                                "--size", "1280x800"], env)
    os.remove(png)
    row["window"] = window_first_frame(store, env)
    row["store_gb"] = os.path.getsize(store) / 1e9
    for path in (store, store + "-wal", store + "-shm"):
        if os.path.exists(path):
            os.remove(path)
    return row


def read_rows(path):
    rows = []
    with open(path) as f:
        for rec in csv.DictReader(f):
            row = {"slices": int(rec["slices"]), "json_gb": float(rec["json_gb"]),
                   "store_gb": float(rec["store_gb"])}
            for s in STAGES:
                key = s.replace(" ", "_")
                # Figures from before a stage existed show as not run.
                row[s] = (float(rec.get(key + "_s") or 0), float(rec.get(key + "_mb") or 0))
            rows.append(row)
    return rows


def markdown(rows):
    out = ["| slices | JSON | " + " | ".join(STAGES) + " |",
           "|---" * (len(STAGES) + 2) + "|"]
    for r in rows:
        cells = [("not run" if r[s][1] <= 0 else
                  f"{r[s][0] * 1000:.0f} ms / {r[s][1]:.0f} MB" if r[s][0] < 1 else
                  f"{r[s][0]:.1f} s / {r[s][1]:.0f} MB") for s in STAGES]
        out.append(f"| {r['slices']:.0e} | {r['json_gb']:.2f} GB | " + " | ".join(cells) + " |")
    return "\n".join(out)


def svg_plot(rows, path):
    """Log-log: seconds per stage (lines) against slices; plain SVG, no plotting library."""
    import math
    w, h, left, bottom, top, right = 720, 460, 70, 50, 30, 170
    xs = [math.log10(r["slices"]) for r in rows]
    ys = [r[s][0] for r in rows for s in STAGES if r[s][0] > 0]
    x0, x1 = math.floor(min(xs)), math.ceil(max(xs))
    y0, y1 = math.floor(math.log10(min(ys))), math.ceil(math.log10(max(ys)))
    px = lambda v: left + (v - x0) / max(x1 - x0, 1) * (w - left - right)
    py = lambda s: h - bottom - (math.log10(max(s, 1e-3)) - y0) / max(y1 - y0, 1) * (h - top - bottom)
    colors = ["#888", "#1f77b4", "#2ca02c", "#d62728", "#9467bd", "#ff7f0e", "#17becf"]
    parts = [f'<svg xmlns="http://www.w3.org/2000/svg" width="{w}" height="{h}" '
             'font-family="sans-serif" font-size="12">',
             f'<rect width="{w}" height="{h}" fill="white"/>',
             f'<text x="{left}" y="18" font-size="14" font-weight="bold">Time per stage vs. '
             'trace size (log-log)</text>']
    for e in range(x0, x1 + 1):
        x = px(e)
        parts.append(f'<line x1="{x}" y1="{top}" x2="{x}" y2="{h - bottom}" stroke="#ddd"/>')
        parts.append(f'<text x="{x}" y="{h - bottom + 18}" text-anchor="middle">10^{e}</text>')
    for e in range(y0, y1 + 1):
        y = py(10 ** e)
        parts.append(f'<line x1="{left}" y1="{y}" x2="{w - right}" y2="{y}" stroke="#ddd"/>')
        parts.append(f'<text x="{left - 6}" y="{y + 4}" text-anchor="end">{10 ** e:g} s</text>')
    parts.append(f'<text x="{(left + w - right) / 2}" y="{h - 12}" text-anchor="middle">'
                 'slices</text>')
    for i, s in enumerate(STAGES):
        shown = [r for r in rows if r[s][1] > 0]
        pts = " ".join(f"{px(math.log10(r['slices']))},{py(r[s][0])}" for r in shown)
        parts.append(f'<polyline points="{pts}" fill="none" stroke="{colors[i]}" '
                     'stroke-width="2"/>')
        for r in shown:
            parts.append(f'<circle cx="{px(math.log10(r["slices"]))}" cy="{py(r[s][0])}" r="3" '
                         f'fill="{colors[i]}"/>')
        ly = top + 10 + i * 20
        parts.append(f'<line x1="{w - right + 14}" y1="{ly}" x2="{w - right + 34}" y2="{ly}" '
                     f'stroke="{colors[i]}" stroke-width="2"/>')
        parts.append(f'<text x="{w - right + 40}" y="{ly + 4}">{s}</text>')
    parts.append("</svg>")
    with open(path, "w") as f:
        f.write("\n".join(parts) + "\n")


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--sizes", default="1e6,1e7,1e8")
    parser.add_argument("--work", default="/tmp")
    parser.add_argument("--binary", default=os.path.join(ROOT, "build/app/stallscope"))
    parser.add_argument("--csv")
    parser.add_argument("--svg")
    parser.add_argument("--skip", action="append", default=[])
    parser.add_argument("--rows", help="earlier figures (a --csv file) to add to the table")
    parser.add_argument("--kill", action="store_true",
                        help="also kill and cancel a second import halfway (nothing may change)")
    args = parser.parse_args()
    rows = read_rows(args.rows) if args.rows else []
    for size in args.sizes.split(","):
        if not size:
            continue
        slices = int(float(size))
        skipped = [k.split("@")[0] for k in args.skip if int(float(k.split("@")[1])) == slices]
        rows.append(run_size(slices, args.work, args.binary, skipped, args.kill))
        print(markdown(rows[-1:]).splitlines()[-1], flush=True)
    rows.sort(key=lambda r: r["slices"])  # earlier rows (--rows) may be of a larger size
    print(markdown(rows))
    if args.csv:
        with open(args.csv, "w", newline="") as f:
            out = csv.writer(f)
            out.writerow(["slices", "json_gb", "store_gb"] +
                         [f"{s.replace(' ', '_')}_{u}" for s in STAGES for u in ("s", "mb")])
            for r in rows:
                out.writerow([r["slices"], f"{r['json_gb']:.3f}", f"{r['store_gb']:.3f}"] +
                             [f"{v:.2f}" if u == 0 else f"{v:.0f}" for s in STAGES
                              for u, v in enumerate(r[s])])
    if args.svg:
        svg_plot(rows, args.svg)


if __name__ == "__main__":
    main()

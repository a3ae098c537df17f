#!/usr/bin/env python3
"""Memory over time: RSS and `used_memory` during a load of `--keys` keys
of 100 B and then while idle, Tern beside redis-server-unstable, one after
the other, each server fresh, on a free port on 127.0.0.1, snapshots off
(Redis also without AOF), pinned to CPU 0 (`--server-cpus`; Tern with
`--threads` workers, default 2, its own default), tern-bench on CPU 1.

For each server: SETs of keys memtier-1..memtier-N in key order (one
tern-bench thread, 50 connections, pipeline 50, `-n allkeys`), sampled
every `--sample` seconds from the start of the load until `--idle` seconds
after it ended: the server's VmRSS (from /proc/PID/status, cheap: smaps
is not read, since walking the page tables would stall the server) and
INFO memory's `used_memory` (one RESP request over a fresh connection).
The load ends when tern-bench exits; DBSIZE is then checked against
`--keys`.

Writes `<out>.csv` (server, seconds, rss_bytes, used_memory_bytes, phase
load|idle) and `<out>.svg` (MiB over seconds since the load started: RSS
solid, used_memory dashed, a dotted mark where each server's load ended),
and prints a Markdown table per server: RSS and used_memory right after
the load (the first sample after tern-bench exited) and after the idle
period (the last sample), in MiB and bytes per key, beside the
key+value+24 bound per key (the average length of the keys, 100 B of
value, 24 B).

    cargo build --release -p tern-server -p tern-bench
    python3 bench/memory_curve.py [--keys 1000000] [--idle 30] [--sample 0.1] [--out bench/memory-curve]
    python3 bench/memory_curve.py --keys 5000000 --out bench/memory-curve-5m
"""
import argparse
import subprocess
import sys
import tempfile
import time

import datatypes
from datatypes import ROOT, BENCH, stop
from datatypes import start as start_server
from list_memory import request

VALUE = 100
NAMES = {"tern": "Tern", "redis-unstable": "Redis", "redis-7.0": "Redis 7.0"}
# (RSS, used_memory) colours per server, in --servers order.
COLOURS = [("#c0392b", "#e67e22"), ("#2c5fb8", "#17a2b8"), ("#2e8b2e", "#8e44ad")]


def rss(pid):
    """VmRSS of `pid`, in bytes."""
    for line in open(f"/proc/{pid}/status"):
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) * 1024
    raise RuntimeError("no VmRSS")


def used_memory(port):
    for line in request(port, "INFO", "memory").splitlines():
        if line.startswith("used_memory:"):
            return int(line.split(":", 1)[1])
    raise RuntimeError("used_memory not in INFO memory")


def key_length(keys):
    """Average length of "memtier-1".."memtier-<keys>"."""
    digits, d, lo = 0, 1, 1
    while lo <= keys:
        hi = min(keys, lo * 10 - 1)
        digits += d * (hi - lo + 1)
        d, lo = d + 1, lo * 10
    return len("memtier-") + digits / keys


def run(server, keys, sample, idle, cpus, bench_cpus):
    """Loads `server` while sampling; (samples, load_end, dbsize), samples as
    (seconds, rss_bytes, used_memory_bytes, phase)."""
    extra = ["--appendonly", "no"] if server.startswith("redis") else []
    p, port = start_server(server, extra, cpus=cpus)
    try:
        argv = ["taskset", "-c", bench_cpus, str(BENCH), "-p", str(port), "-t", "1", "-c", "50", "--pipeline", "50",
                "--ratio", "1:0", "--key-pattern", "P:P", "-n", "allkeys", "--key-minimum", "1",
                "--key-maximum", str(keys), "-d", str(VALUE), "--hide-histogram"]
        samples, load_end = [], None
        with tempfile.TemporaryFile() as out:
            t0 = time.monotonic()
            b = subprocess.Popen(argv, stdout=out, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL)
            try:
                i = 0
                while True:
                    if load_end is None and b.poll() is not None:
                        load_end = time.monotonic() - t0
                    t = time.monotonic() - t0
                    if p.poll() is not None:
                        raise RuntimeError(f"{server} exited during the run")
                    r, u = rss(p.pid), used_memory(port)
                    samples.append((t, r, u, "load" if load_end is None else "idle"))
                    if load_end is not None and t >= load_end + idle:
                        break
                    if load_end is None and t > 1800:
                        raise RuntimeError("the load took over 1800 s")
                    i += 1
                    time.sleep(max(0.0, t0 + i * sample - time.monotonic()))
            finally:
                if b.poll() is None:
                    b.kill()
                b.wait()
            out.seek(0)
            text = out.read().decode(errors="replace")
        if b.returncode != 0 or "Totals" not in text:
            raise RuntimeError(f"tern-bench failed ({b.returncode}):\n{text[-2000:]}")
        dbsize = int(request(port, "DBSIZE")[1:])
        if dbsize != keys:
            raise RuntimeError(f"{server}: DBSIZE {dbsize} after loading {keys} keys")
        return samples, load_end, dbsize
    finally:
        stop(p)


def nice_step(span, n=6):
    """A step of 1, 2 or 5 times a power of ten giving about `n` ticks over `span`."""
    raw = span / n
    mag = 10 ** int(f"{raw:e}".split("e")[1])
    return next(m * mag for m in (1, 2, 5, 10) if m * mag >= raw)


def svg(runs, path, title):
    """`runs`: [(label, (rss colour, used colour), samples, load_end)]."""
    w, h = 960, 480
    left, right, top, bottom = 70, 20, 50, 60
    pw, ph = w - left - right, h - top - bottom
    mib = 1 << 20
    t_max = max(s[-1][0] for _, _, s, _ in runs) or 1
    t_step = nice_step(t_max)
    y_top = max(max(x[1], x[2]) for _, _, s, _ in runs for x in s) / mib * 1.05 or 1
    y_step = nice_step(y_top)
    y_max = y_step * -(-y_top // y_step)

    def pt(t, v):
        return left + pw * t / t_max, top + ph - ph * v / y_max

    parts = [f'<svg xmlns="http://www.w3.org/2000/svg" width="{w}" height="{h}" font-family="sans-serif">',
             f'<rect width="{w}" height="{h}" fill="white"/>']
    for i in range(int(round(y_max / y_step)) + 1):
        v = i * y_step
        y = pt(0, v)[1]
        parts.append(f'<line x1="{left}" y1="{y:.1f}" x2="{w - right}" y2="{y:.1f}" stroke="#e4e4e4"/>')
        parts.append(f'<text x="{left - 6}" y="{y + 4:.1f}" text-anchor="end" font-size="11">{v:g}</text>')
    for i in range(int(t_max / t_step + 1e-9) + 1):
        t = i * t_step
        x = pt(t, 0)[0]
        parts.append(f'<line x1="{x:.1f}" y1="{top + ph}" x2="{x:.1f}" y2="{top + ph + 5}" stroke="#333"/>')
        parts.append(f'<text x="{x:.1f}" y="{top + ph + 18}" text-anchor="middle" font-size="11">{t:g}</text>')
    parts.append(f'<polyline fill="none" stroke="#333" points="{left},{top} {left},{top + ph} {w - right},{top + ph}"/>')
    parts.append(f'<text x="{left + pw / 2:.0f}" y="{h - 15}" text-anchor="middle" font-size="12">'
                 f'seconds since the load started</text>')
    parts.append(f'<text x="18" y="{top + ph / 2:.0f}" text-anchor="middle" font-size="12" '
                 f'transform="rotate(-90 18 {top + ph / 2:.0f})">MiB</text>')
    legend = []
    for label, (c_rss, c_used), samples, load_end in runs:
        x = pt(load_end, 0)[0]
        mark = ' stroke-dasharray="2,3"'
        parts.append(f'<line x1="{x:.1f}" y1="{top}" x2="{x:.1f}" y2="{top + ph}" stroke="{c_rss}" stroke-width="1.2"'
                     f'{mark}/>')
        legend.append((c_rss, mark, f"{label} load ends ({load_end:.1f} s)"))
        for col, colour, dash, what in ((1, c_rss, "", "RSS"), (2, c_used, ' stroke-dasharray="7,4"', "used_memory")):
            points = " ".join("%.1f,%.1f" % pt(s[0], s[col] / mib) for s in samples)
            parts.append(f'<polyline fill="none" stroke="{colour}" stroke-width="1.6"{dash} points="{points}"/>')
            legend.append((colour, dash, f"{label} {what}"))
    lx, ly = w - right - 210, top + ph - 20 - 18 * len(legend)
    parts.append(f'<rect x="{lx - 8}" y="{ly - 8}" width="208" height="{18 * len(legend) + 8}" fill="white" '
                 f'stroke="#ccc"/>')
    for k, (colour, dash, text) in enumerate(legend):
        y = ly + 18 * k + 5
        width = 1.2 if "2,3" in dash else 2
        parts.append(f'<line x1="{lx}" y1="{y}" x2="{lx + 30}" y2="{y}" stroke="{colour}" stroke-width="{width}"{dash}/>')
        parts.append(f'<text x="{lx + 38}" y="{y + 4}" font-size="12">{text}</text>')
    parts.append(f'<text x="{w / 2:.0f}" y="24" text-anchor="middle" font-size="14">{title}</text>')
    parts.append("</svg>\n")
    with open(path, "w") as f:
        f.write("".join(parts))


def table(server, label, keys, samples, load_end, idle, note=""):
    after = next(s for s in samples if s[3] == "idle")
    last = samples[-1]
    bound = key_length(keys) + VALUE + 24
    mib = 1 << 20
    print(f"\n{label} (`{server}`{note}), {keys:,} keys of {VALUE} B, load ended at {load_end:.1f} s\n")
    print("| when | keys | RSS MiB | used_memory MiB | RSS B/key | used_memory B/key | key+value+24 B/key |")
    print("|---|---:|---:|---:|---:|---:|---:|")
    for when, s in ((f"after the load ({s_t(after)})", after), (f"after {idle:g} s idle ({s_t(last)})", last)):
        print(f"| {when} | {keys:,} | {s[1] / mib:,.1f} | {s[2] / mib:,.1f} | {s[1] / keys:.1f} | {s[2] / keys:.1f} "
              f"| {bound:.1f} |")


def s_t(s):
    return f"t={s[0]:.1f} s"


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--servers", default="tern,redis-unstable", help="names in datatypes.SERVERS, run in this order (default: %(default)s)")
    ap.add_argument("--keys", type=int, default=1_000_000, help="keys loaded (default: %(default)s)")
    ap.add_argument("--sample", type=float, default=0.1, help="seconds between samples (default: %(default)s)")
    ap.add_argument("--idle", type=float, default=30, help="seconds sampled after the load ended (default: %(default)s)")
    ap.add_argument("--threads", type=int, default=2, help="Tern's workers (default: %(default)s, Tern's own default)")
    ap.add_argument("--server-cpus", default="0", help="the CPUs every server may use (default: %(default)s)")
    ap.add_argument("--bench-cpus", default="1", help="the CPUs tern-bench may use (default: %(default)s)")
    ap.add_argument("--out", default=str(ROOT / "bench/memory-curve"),
                    help="writes OUT.csv and OUT.svg (default: bench/memory-curve in the repository)")
    args = ap.parse_args()
    datatypes.SERVERS["tern"] = [x for x in datatypes.SERVERS["tern"] if x not in ("--threads", "1")] + [
        "--threads", str(args.threads)]
    servers = [s for s in args.servers.split(",") if s]
    runs, dbsize_of = [], {}
    for n, server in enumerate(servers):
        label = NAMES.get(server, server)
        print(f"{server}: loading {args.keys:,} keys ...", file=sys.stderr, flush=True)
        samples, load_end, dbsize = run(server, args.keys, args.sample, args.idle, args.server_cpus, args.bench_cpus)
        print(f"{server}: load ended at {load_end:.1f} s, {len(samples)} samples, DBSIZE {dbsize:,}",
              file=sys.stderr, flush=True)
        runs.append((server, label, COLOURS[n % len(COLOURS)], samples, load_end))
        dbsize_of[server] = dbsize
    with open(args.out + ".csv", "w") as f:
        f.write("server,seconds,rss_bytes,used_memory_bytes,phase\n")
        for server, _, _, samples, _ in runs:
            for t, r, u, phase in samples:
                f.write(f"{server},{t:.3f},{r},{u},{phase}\n")
    tern = f" ({args.threads} worker{'s' if args.threads != 1 else ''})"
    names = " vs ".join(label + (tern if server == "tern" else "") for server, label, *_ in runs)
    title = (f"RSS and used_memory: {args.keys:,} keys of {VALUE} B values loaded, then {args.idle:g} s idle; "
             f"{names}")
    svg([(label, c, s, e) for _, label, c, s, e in runs], args.out + ".svg", title)
    print(f"wrote {args.out}.csv and {args.out}.svg", file=sys.stderr)
    for server, label, _, samples, load_end in runs:
        note = f", {args.threads} worker{'s' if args.threads != 1 else ''}" if server == "tern" else ""
        table(server, label, dbsize_of[server], samples, load_end, args.idle, note)


if __name__ == "__main__":
    main()

#!/usr/bin/env python3
"""What COMMANDLOG's large-reply check costs GET (issue 20's target: within 2%).

Two tern-server release builds of the same binary, both with copy avoidance on
(reply-copy-avoid-min-size 16kb): `disabled` (commandlog-reply-larger-than -1)
and `armed` (commandlog-reply-larger-than 9223372036854775807: every reply is
measured and compared, none is logged). With OLD=<binary>, a third server runs
a build from before the command logs (`before`). GET of 100 B values (copied)
and of 64 KiB values (sent by reference), pipelines 1 and 16 (PIPES=...),
alternating runs, medians of ops/s and server CPU µs/op. Servers on CPU 0
(--threads 1), tern-bench on CPU 1; Srv and bench are copy_avoid.py's.

    cargo build --release -p tern-server -p tern-bench
    REPEATS=7 SECS=10 python3 bench/commandlog_cost.py
"""
import os, statistics

from copy_avoid import NEW, OLD, REPEATS, SECS, Srv, bench  # beside this script

NEVER = str((1 << 63) - 1)


def main():
    rows = []
    pipes = [int(p) for p in os.environ.get("PIPES", "1,16").split(",")]
    for size, keys in [(100, 100000), (65536, 1000)]:
        base = ["--reply-copy-avoid-min-size", "16kb"]
        srvs = [Srv("disabled", NEW, base + ["--commandlog-reply-larger-than", "-1"]),
                Srv("armed", NEW, base + ["--commandlog-reply-larger-than", NEVER])]
        if OLD:
            srvs.append(Srv("before", OLD, base))
        common = ["-d", str(size), "--key-minimum", "1", "--key-maximum", str(keys), "--key-prefix", "k:"]
        for s in srvs:
            bench(s, ["-t", "1", "-c", "1", "--ratio", "1:0", "-n", "allkeys", "--key-pattern", "P:P"] + common)
        for pipe in pipes:
            runs = {s.name: [] for s in srvs}
            for rep in range(REPEATS):
                order = srvs[rep % len(srvs):] + srvs[:rep % len(srvs)]
                for s in order:
                    args = ["-t", "1", "-c", "4", "--pipeline", str(pipe), "--ratio", "0:1", "--test-time", str(SECS),
                            "--key-pattern", "R:R", "--distinct-client-seed"] + common
                    tot, cpu, cmd = bench(s, args)
                    r = (tot["Ops/sec"], cpu / tot["Count"] * 1e6)
                    runs[s.name].append(r)
                    print(f"{size} p{pipe} {s.name} rep{rep}: {r[0]:.0f} ops/s {r[1]:.2f} cpu-us/op", flush=True)
                    last_cmd = cmd
            med = {s.name: (statistics.median(r[0] for r in runs[s.name]), statistics.median(r[1] for r in runs[s.name])) for s in srvs}
            for s in srvs:
                ops, us = med[s.name]
                rows.append((size, pipe, s.name, ops, us, ops / med["disabled"][0]))
            print("cmd:", " ".join(last_cmd), flush=True)
        for s in srvs:
            print("server:", " ".join(s.cmd))
            s.stop()
    print("\n| value | pipeline | server | ops/s (median) | server CPU µs/op (median) | ops/s vs disabled |")
    print("|---|---|---|---|---|---|")
    for size, pipe, name, ops, us, ratio in rows:
        shown = f"{size} B" if size < 1024 else f"{size // 1024} KiB"
        print(f"| {shown} | {pipe} | {name} | {ops:,.0f} | {us:.2f} | {ratio:.3f} |")


if __name__ == "__main__":
    main()

#!/usr/bin/env python3
"""Interleaved A/B runs of single workqueue drains, for trying one change at a time.

    python3 bench/workqueue/ab.py ROUNDS LABEL=COMMAND [LABEL=COMMAND ...]

Each COMMAND is a shell command line that prints one JSON result line last, as
`kclient-bench-workqueue drain ...` and `bench-go drain ...` do. Every round runs every command
once, so that a noisy neighbour hits all of them alike, each round starting one further along the
list, so that no command always runs first or right after the same other one. Then, per label:
the medians of the drain time, the items processed, the p99 add-to-get latency (with its
quartiles over the rounds) and the drain's user and system CPU; how many rounds its drain time
and its p99 were lower than those of the last label's run in the same round, and the median of
its time over that run's; in how many rounds its drain's system time was at most its user time,
and the ratio of the two summed over the rounds (the kernel splits CPU time between them by
sampling at its ticks, so one short drain's split rests on a few samples). Put the reference
(client-go, or the build before a change) last.

Example, a build before and after a change against client-go:

    python3 bench/workqueue/ab.py 41 \\
        "before=/tmp/kb-before drain blocking 8 8 repeated 400000" \\
        "after=target/release/kclient-bench-workqueue drain blocking 8 8 repeated 400000" \\
        "go=bench/workqueue/target/bench-go drain 8 8 repeated 400000"

The full comparison that bench/RESULTS.md reports is `bench/workqueue/run`; this is for the
quick, focused runs that decide whether a change is worth that.

Commands that print a `merged` result (`kclient-bench-workqueue merged ...`, `bench-go merged
...`) get the median time per add with its range over the rounds and the median of the whole
run's time instead, for example:

    python3 bench/workqueue/ab.py 21 \\
        "thread=target/release/kclient-bench-workqueue merged thread 400000" \\
        "task=target/release/kclient-bench-workqueue merged task 400000" \\
        "go=bench/workqueue/target/bench-go merged 400000"
"""

import json
import statistics
import subprocess
import sys


def run(command):
    out = subprocess.run(
        command, shell=True, check=True, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True
    ).stdout
    lines = out.strip().splitlines()
    if not lines:
        sys.exit(f"ab.py: {command!r} printed nothing")
    return json.loads(lines[-1])


def main():
    if len(sys.argv) < 3 or not sys.argv[1].isdigit() or any("=" not in a for a in sys.argv[2:]):
        sys.exit(__doc__)
    rounds = int(sys.argv[1])
    sides = [arg.split("=", 1) for arg in sys.argv[2:]]
    results = {label: [] for label, _ in sides}
    for round_number in range(rounds):
        start = round_number % len(sides)
        for label, command in sides[start:] + sides[:start]:
            results[label].append(run(command))
    reference = sides[-1][0]
    for label, _ in sides:
        runs = results[label]
        if "ns_per_add" in runs[0]:
            per_add = sorted(r["ns_per_add"] for r in runs)
            elapsed = statistics.median(r["elapsed_s"] for r in runs)
            print(
                f"{label:8} {statistics.median(per_add):6.2f} ns per add "
                f"({per_add[0]:.2f}-{per_add[-1]:.2f}), {elapsed * 1e3:.2f} ms for the adds"
            )
            continue

        def med(key):
            return statistics.median(r[key] for r in runs)

        p99 = sorted(r["p99_us"] for r in runs)
        pairs = list(zip(runs, results[reference]))
        lower = sum(a["p99_us"] < b["p99_us"] for a, b in pairs)
        faster = sum(a["seconds"] < b["seconds"] for a, b in pairs)
        ratio = statistics.median(a["seconds"] / b["seconds"] for a, b in pairs)
        cpu = [r for r in runs if "drain_user_s" in r]
        cpu_text = "drain CPU not reported"
        if cpu:
            user = statistics.median(r["drain_user_s"] for r in cpu)
            system = statistics.median(r["drain_sys_s"] for r in cpu)
            within = sum(r["drain_sys_s"] <= r["drain_user_s"] for r in cpu)
            pooled = sum(r["drain_sys_s"] for r in cpu) / max(sum(r["drain_user_s"] for r in cpu), 1e-9)
            cpu_text = (
                f"drain user/sys {user:.4f}/{system:.4f} s, sys <= user in {within}/{len(cpu)}, "
                f"pooled sys/user {pooled:.2f}"
            )
        print(
            f"{label:8} {med('seconds'):.4f} s ({ratio:.2f}x {reference}, faster in {faster}/{rounds})  "
            f"{med('processed'):7.0f} items  "
            f"p99 {med('p99_us'):6.0f} us (quartiles {p99[len(p99) // 4]:.0f}-{p99[3 * len(p99) // 4]:.0f}), "
            f"lower than {reference} in {lower}/{rounds}  {cpu_text}"
        )


if __name__ == "__main__":
    main()

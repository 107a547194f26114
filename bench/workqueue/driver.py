#!/usr/bin/env python3
"""Runs the workqueue benchmark (see bench/README.md, "Workqueue"): every measurement of the
kclient harness and of the client-go program, one process each, interleaved round by round, and
writes one JSON line per run with the child's user and system CPU seconds from getrusage
(os.wait4) added.

    driver.py --kclient BIN --go BIN --rounds 3 --adds 400000 --out results.jsonl
"""

import argparse
import json
import os
import subprocess
import sys
import threading

SIZES = [1, 2, 8, 32]
KEYS = ["distinct", "repeated"]
PENDING = 100_000
FIRE = ["100000", "100", "2"]
TIMEOUT_SECONDS = 300


def groups(kclient, go, adds):
    """Each group is the list of command lines that are compared with one another."""
    for size in SIZES:
        for keys in KEYS:
            common = [str(size), str(size), keys, str(adds)]
            yield [
                [kclient, "drain", "blocking", *common],
                [kclient, "drain", "async", *common],
                [go, "drain", *common],
            ]
    for kind in ["add_after", "add_rate_limited"]:
        yield [[kclient, "delayed", kind, str(PENDING)], [go, "delayed", kind, str(PENDING)]]
    yield [[kclient, "fire", *FIRE], [go, "fire", *FIRE]]


def run(argv):
    """Runs one child; returns its JSON result with its CPU times."""
    child = subprocess.Popen(argv, stdout=subprocess.PIPE)
    killer = threading.Timer(TIMEOUT_SECONDS, child.kill)
    killer.start()
    out = child.stdout.read()
    _, status, usage = os.wait4(child.pid, 0)
    killer.cancel()
    child.returncode = os.waitstatus_to_exitcode(status)
    if child.returncode != 0:
        sys.exit(f"driver: {' '.join(argv)} failed with status {child.returncode}")
    result = json.loads(out)
    result["user_s"] = usage.ru_utime
    result["sys_s"] = usage.ru_stime
    result["max_rss_kb"] = usage.ru_maxrss
    return result


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--kclient", required=True)
    parser.add_argument("--go", required=True)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--adds", type=int, default=400_000)
    parser.add_argument("--out", required=True)
    args = parser.parse_args()
    all_groups = list(groups(args.kclient, args.go, args.adds))
    with open(args.out, "w") as out:
        for round_ in range(args.rounds):
            print(f"workqueue bench: round {round_ + 1}/{args.rounds}", file=sys.stderr)
            for group in all_groups:
                # Each round starts the group one program later, so that order effects spread.
                for i in range(len(group)):
                    argv = group[(i + round_) % len(group)]
                    result = run(argv)
                    result["round"] = round_ + 1
                    out.write(json.dumps(result) + "\n")
                    out.flush()
        for argv in ([args.kclient, "threads", "40"], [args.go, "threads", "40"]):
            out.write(json.dumps(run(argv)) + "\n")


if __name__ == "__main__":
    main()

#!/usr/bin/env python3
"""Runs the workqueue benchmark (see bench/README.md, "Workqueue"): every measurement of the
kclient harness and of the client-go program, one process each, interleaved round by round, and
writes one JSON line per run with the child's user and system CPU seconds from getrusage
(os.wait4) added, and the cross-core round trip measured just before it (the kclient harness's
`pingpong`: where the hypervisor placed the two vCPUs moves every drain with distinct keys).

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
PINGPONG_ROUND_TRIPS = "100000"
BEFORE = None
# What each worker does per item in the drains with working workers (repeated keys only), so
# that the workers, not the queue, are the bottleneck: compute for 20 us (a reconcile that
# computes), or sleep for 1 ms (a reconcile that waits for the API server).
WORK = ["busy:20", "wait:1000"]
# The control drain: 32 x 32 with so few adds that the queue has next to nothing to do, so that
# its CPU time is what starting, running and ending the program and its threads cost.
CONTROL = ["32", "32", "repeated", "1000"]


def groups(kclient, go, before, adds):
    """Each group is the list of command lines that are compared with one another; `before`
    (optional) is the kclient harness built on the queue before the redesign."""
    kclients = [kclient] + ([before] if before else [])
    for size in SIZES:
        for keys in KEYS:
            common = [str(size), str(size), keys, str(adds)]
            yield [[k, "drain", api, *common] for k in kclients for api in ["blocking", "async", "tasks"]] + [
                [go, "drain", *common]
            ]
    # Working workers: the harness before the redesign may not take the work argument, so only
    # the current kclient harness and client-go run these.
    for work in WORK:
        for size in SIZES:
            common = [str(size), str(size), "repeated", str(adds), work]
            yield [[kclient, "drain", api, *common] for api in ["blocking", "async", "tasks"]] + [
                [go, "drain", *common]
            ]
    for kind in ["add_after", "add_rate_limited"]:
        yield [[k, "delayed", kind, str(PENDING)] for k in kclients] + [
            [go, "delayed", kind, str(PENDING)]
        ]
    yield [[k, "fire", *FIRE] for k in kclients] + [[go, "fire", *FIRE]]


def run(argv, probe=None):
    """Runs one child; returns its JSON result with its CPU times, and with the cross-core round
    trip that `probe` (the kclient harness) measured just before, when given."""
    cross_core_ns = None
    if probe:
        cross_core_ns = run([probe, "pingpong", PINGPONG_ROUND_TRIPS])["ns_per_round_trip"]
    load1 = os.getloadavg()[0]
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
    if BEFORE and argv[0] == BEFORE:
        result["impl"] = "kclient-before"
    result["user_s"] = usage.ru_utime
    result["sys_s"] = usage.ru_stime
    # The peak RSS is the program's own (`peak_rss_kb`, its VmHWM): getrusage's ru_maxrss keeps
    # the peak of the process from before exec, this Python driver's, larger than most runs'.
    # The machine's 1-minute load average as the child started (the machine is shared).
    result["load1"] = load1
    if cross_core_ns is not None:
        result["cross_core_ns"] = cross_core_ns
    return result


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--kclient", required=True)
    parser.add_argument("--go", required=True)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--adds", type=int, default=400_000)
    parser.add_argument("--out", required=True)
    parser.add_argument("--kclient-before", help="the harness built on the queue before the redesign")
    args = parser.parse_args()
    global BEFORE
    BEFORE = args.kclient_before
    # Each group with the fields its results get: the control drain's are marked as such (its
    # command lines may equal a measured drain's, with ADDS 1000).
    control = [[args.kclient, "drain", api, *CONTROL] for api in ["blocking", "async"]]
    control.append([args.go, "drain", *CONTROL])
    all_groups = [(group, {}) for group in groups(args.kclient, args.go, BEFORE, args.adds)]
    all_groups.append((control, {"control": True}))
    with open(args.out, "w") as out:
        for round_ in range(args.rounds):
            print(f"workqueue bench: round {round_ + 1}/{args.rounds}", file=sys.stderr)
            for group, fields in all_groups:
                # Each round starts the group one program later, so that order effects spread.
                for i in range(len(group)):
                    argv = group[(i + round_) % len(group)]
                    result = run(argv, probe=args.kclient)
                    result.update(fields)
                    result["round"] = round_ + 1
                    out.write(json.dumps(result) + "\n")
                    out.flush()
        threads = [[args.kclient, "threads", "40"], [args.go, "threads", "40"]]
        if BEFORE:
            threads.append([BEFORE, "threads", "40"])
        for argv in threads:
            out.write(json.dumps(run(argv)) + "\n")


if __name__ == "__main__":
    main()

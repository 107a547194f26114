#!/usr/bin/env python3
"""Runs the controller benchmark's contenders, interleaved, and writes RESULTS.md.

Called by ./run after it has built the programs and created the fixture; see README.md.
Usage: drive.py OUT_DIR NAMESPACE PARENTS ROUNDS RATE SECONDS SOURCE CONTENDER=BINARY...
"""

import bisect
import json
import os
import statistics
import subprocess
import sys
import threading
import time


def log(msg):
    print(f"bench/controller: {msg}", file=sys.stderr, flush=True)


# GNU time's line on standard error: wall, user and system seconds, peak RSS in KiB.
TIMED = ["/usr/bin/time", "-f", "TIME %e %U %S %M"]


def slug_of(name):
    """A contender's name as it appears in file names."""
    return "".join(ch if ch.isalnum() or ch == "-" else "_" for ch in name)


def time_line(lines):
    """(wall, user, system, peak RSS KiB) from GNU time's last line among `lines`, or None."""
    timing = [l for l in lines if l.startswith("TIME ")]
    return timing[-1].split()[1:5] if timing else None


def run_contender(name, argv, out, namespace, parents, children, rate, seconds, go_tool):
    """One run: start, wait for every Parent reconciled, churn, settle, stop; return a row."""
    slug = slug_of(name)
    recon_log = os.path.join(out, f"reconciles-{slug}.log")
    writes_log = os.path.join(out, f"writes-{slug}.log")
    load = os.getloadavg()[0]
    proc = subprocess.Popen(
        [*TIMED, *argv, namespace, str(parents), recon_log],
        stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
    )
    stderr_lines = []
    stderr_reader = threading.Thread(target=lambda: stderr_lines.extend(proc.stderr), daemon=True)
    stderr_reader.start()
    sync = None
    deadline = time.time() + 600
    for line in proc.stdout:
        event = json.loads(line) if line.startswith("{") else {}
        if event.get("event") == "all_reconciled":
            sync = event["seconds"]
            break
        if time.time() > deadline:
            break
    if sync is None:
        proc.kill()
        raise SystemExit(f"{name}: never reconciled all {parents} Parents; stderr: {''.join(stderr_lines[-20:])}")
    churn = subprocess.run(
        [go_tool, "churn", "-namespace", namespace, "-parents", str(parents), "-children", str(children),
         "-rate", str(rate), "-seconds", str(seconds), "-log", writes_log],
        check=True, capture_output=True, text=True,
    )
    churn_stats = json.loads(churn.stdout.strip().splitlines()[-1])
    time.sleep(5)  # let the last writes' events arrive and their reconciles run
    proc.stdin.close()
    rest = proc.stdout.read()
    if proc.wait(timeout=120) != 0:
        raise SystemExit(f"{name} exited {proc.returncode}: {''.join(stderr_lines[-20:])}")
    stderr_reader.join(timeout=10)
    timing = time_line(stderr_lines)
    if not timing:
        raise SystemExit(f"{name}: no /usr/bin/time line; stderr: {''.join(stderr_lines[-20:])}")
    wall, user, system, max_rss_kib = timing
    done = [json.loads(l) for l in rest.splitlines() if l.startswith("{")]
    # kclient's program reports on standard error when each cache synced.
    synced = {}
    for l in stderr_lines:
        if l.startswith('{"event":"') and '_synced"' in l:
            e = json.loads(l)
            synced[e["event"]] = e["seconds"]
    row = {
        "client": name,
        "load": load,
        "parents_synced_s": synced.get("parents_synced"),
        "children_synced_s": synced.get("children_synced"),
        "sync_s": sync,
        "cpu_s": float(user) + float(system),
        "user_s": float(user),
        "sys_s": float(system),
        "peak_rss_mib": int(max_rss_kib) / 1024,
        "reconciles": done[-1]["reconciles"] if done else None,
        "churn_rate": churn_stats["rate"],
        "churn_writes": churn_stats["writes"],
        "churn_failed": churn_stats["failed"],
    }
    row.update(delays(recon_log, writes_log))
    return row


def run_idle(name, argv, out, namespace, seconds=3):
    """Peak RSS (MiB) of the same program against an empty namespace: zero Parents, so it only
    starts, lists and watches two empty collections, and is stopped after `seconds`."""
    proc = subprocess.Popen(
        [*TIMED, *argv, namespace, "0", os.path.join(out, f"reconciles-idle-{slug_of(name)}.log")],
        stdin=subprocess.PIPE, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True,
    )
    time.sleep(seconds)
    _, stderr = proc.communicate(input="", timeout=60)
    timing = time_line(stderr.splitlines())
    if proc.returncode != 0 or not timing:
        raise SystemExit(f"{name} (idle) exited {proc.returncode}: {stderr[-2000:]}")
    return int(timing[3]) / 1024


def delays(recon_log, writes_log):
    """Write-to-reconcile delays and lost changes, from the two logs (same machine clock).

    A write's delay is from the moment its request was sent (t0) to the first reconcile of its
    Parent that starts at or after t0. A change is lost when a Parent's last write has no
    reconcile starting after it. Reconciles are no-ops, so a reconcile is not proven to have seen
    the write; with about one write per Parent per second, a reconcile started by another change
    inside that window is rare, and it affects every client alike.
    """
    reconciles = {}
    with open(recon_log) as f:
        for line in f:
            key, at = line.split()
            reconciles.setdefault(key, []).append(int(at))
    for times in reconciles.values():
        times.sort()
    last_write = {}
    waits = []
    first_write = None
    with open(writes_log) as f:
        for line in f:
            key, t0, _t1 = line.split()
            t0 = int(t0)
            first_write = t0 if first_write is None else min(first_write, t0)
            last_write[key] = max(last_write.get(key, 0), t0)
            times = reconciles.get(key, [])
            i = bisect.bisect_left(times, t0)
            if i < len(times):
                waits.append((times[i] - t0) / 1e6)
    lost = sum(1 for key, t0 in last_write.items()
               if bisect.bisect_left(reconciles.get(key, []), t0) == len(reconciles.get(key, [])))
    during = sum(1 for times in reconciles.values() for t in times if first_write and t >= first_write)
    waits.sort()
    def pct(p):
        return waits[min(len(waits) - 1, int(p * len(waits)))] if waits else None
    return {"delay_p50_ms": pct(0.50), "delay_p99_ms": pct(0.99), "delay_max_ms": waits[-1] if waits else None,
            "lost": lost, "reconciles_during_churn": during}


def fmt_range(xs, digits=2):
    xs = sorted(x for x in xs if x is not None)
    if not xs:
        return "n/a"
    return f"{statistics.median(xs):.{digits}f} ({xs[0]:.{digits}f}–{xs[-1]:.{digits}f})"


def report(rows, out_md, args, source):
    clients = []
    for r in rows:
        if r["client"] not in clients:
            clients.append(r["client"])
    by = {c: [r for r in rows if r["client"] == c] for c in clients}
    def med(c, k):
        xs = [r[k] for r in by[c] if r[k] is not None]
        return statistics.median(xs) if xs else float("nan")
    lines = [
        "# Controller benchmark: kclient-controller, controller-runtime and kube-runtime",
        "",
        f"Generated by `bench/controller/run {args['parents']} {args['rounds']}` "
        f"(children per Parent {args['children']}, churn {args['rate']}/s for {args['seconds']} s) "
        f"on {time.strftime('%Y-%m-%d')}; kclient built from {source}. "
        f"Load average (1 min) when each run started: median {statistics.median(r['load'] for r in rows):.1f}, "
        f"{min(r['load'] for r in rows):.1f}–{max(r['load'] for r in rows):.1f} "
        "(2 cores, shared with other agents' builds).",
        "",
        f"{args['parents']} `Parent` custom objects each own {args['children']} ConfigMaps; each "
        "program runs a controller for Parents that owns ConfigMaps, with 4 workers and a "
        "reconcile that only records itself. Median (min–max) over the rounds; the contenders "
        "run interleaved, in a rotating order.",
        "",
        "| client | start to all reconciled (s) | CPU (s, user+sys) | peak RSS (MiB) | churn rate (writes/s) | reconciles during churn | write→reconcile p50 (ms) | p99 (ms) | lost changes |",
        "|---|--:|--:|--:|--:|--:|--:|--:|--:|",
    ]
    for c in clients:
        rs = by[c]
        lines.append(
            f"| {c} | {fmt_range([r['sync_s'] for r in rs])} | {fmt_range([r['cpu_s'] for r in rs])} | "
            f"{fmt_range([r['peak_rss_mib'] for r in rs], 0)} | {fmt_range([r['churn_rate'] for r in rs], 0)} | "
            f"{fmt_range([r['reconciles_during_churn'] for r in rs], 0)} | {fmt_range([r['delay_p50_ms'] for r in rs], 1)} | "
            f"{fmt_range([r['delay_p99_ms'] for r in rs], 1)} | {max(r['lost'] for r in rs)} |"
        )
    lines += [
        "",
        "Peak RSS of each program when there is nothing to watch: the same binary and flags against "
        "an empty namespace (0 Parents; it starts, connects, lists and watches two empty "
        "collections, and is stopped after 3 s), run right after each of its rounds. What the "
        "fixture costs is the peak above that.",
        "",
        "| client | peak RSS, empty namespace (MiB) | peak RSS above it (MiB) |",
        "|---|--:|--:|",
    ]
    for c in clients:
        rs = by[c]
        lines.append(
            f"| {c} | {fmt_range([r['idle_rss_mib'] for r in rs], 1)} | "
            f"{fmt_range([r['rss_above_idle_mib'] for r in rs], 1)} |"
        )
    ours = [c for c in clients if c.startswith("kclient")]
    peers = [c for c in clients if not c.startswith("kclient")]
    breakdown = [c for c in ours if any(r["parents_synced_s"] is not None for r in by[c])]
    if breakdown:
        lines += ["", "Where kclient's start-up time goes (median seconds since process start):", ""]
        for c in breakdown:
            children = (
                f"ConfigMap cache synced {med(c, 'children_synced_s'):.2f}"
                if any(r["children_synced_s"] is not None for r in by[c])
                else "no ConfigMap cache"
            )
            lines.append(
                f"- {c}: Parents cache synced {med(c, 'parents_synced_s'):.2f}, {children}, "
                f"all reconciled {med(c, 'sync_s'):.2f}"
            )
    for k in ours:
        lines += ["", f"Ratios of medians, {k} over each peer (targets: time and peak RSS at most 0.5x):", ""]
        for c in peers:
            lines.append(
                f"- against {c}: time {med(k, 'sync_s') / med(c, 'sync_s'):.2f}x, "
                f"CPU {med(k, 'cpu_s') / med(c, 'cpu_s'):.2f}x, "
                f"peak RSS {med(k, 'peak_rss_mib') / med(c, 'peak_rss_mib'):.2f}x "
                f"(above the empty-namespace peak: "
                f"{med(k, 'rss_above_idle_mib') / med(c, 'rss_above_idle_mib'):.2f}x), "
                f"p99 delay {med(k, 'delay_p99_ms') / med(c, 'delay_p99_ms'):.2f}x"
            )
    with open(out_md, "w") as f:
        f.write("\n".join(lines) + "\n")


def main():
    out, namespace, parents, rounds, rate, seconds, children, source, go_tool = sys.argv[1:10]
    contenders = [a.split("=", 1) for a in sys.argv[10:]]
    parents, rounds, rate = int(parents), int(rounds), int(rate)
    rows = []
    results = os.path.join(out, "controller-results.jsonl")
    with open(results, "w") as f:
        for round_ in range(rounds):
            order = contenders[round_ % len(contenders):] + contenders[:round_ % len(contenders)]
            for name, binary in order:
                log(f"round {round_ + 1}/{rounds}: {name}")
                row = run_contender(name, binary.split(), out, namespace, parents, children, rate, seconds, go_tool)
                row["idle_rss_mib"] = run_idle(name, binary.split(), out, f"{namespace}-idle")
                row["rss_above_idle_mib"] = row["peak_rss_mib"] - row["idle_rss_mib"]
                row["round"] = round_ + 1
                rows.append(row)
                f.write(json.dumps(row) + "\n")
                f.flush()
                log(json.dumps(row))
    report(rows, os.path.join(os.path.dirname(os.path.abspath(__file__)), "RESULTS.md"),
           {"parents": parents, "rounds": rounds, "rate": rate, "seconds": seconds, "children": children},
           source)


if __name__ == "__main__":
    main()

#!/usr/bin/env python3
"""Turns the workqueue benchmark's results.jsonl (driver.py) into the "Workqueue" section of
bench/RESULTS.md (printed on stdout) and a bar chart of the drain times (SVG).

    report.py --results results.jsonl --svg results.svg --command "..." --versions "..." --source "..."
"""

import argparse
import json
import statistics
from collections import defaultdict

SIZES = [1, 2, 8, 32]
KEYS = ["distinct", "repeated"]
SIDES = [("kclient", "blocking"), ("kclient", "async"), ("kclient", "tasks"), ("client-go", "goroutines")]
SIDE_NAMES = {
    ("kclient", "blocking"): "kclient get_blocking (threads)",
    ("kclient", "async"): "kclient get (tasks; producer threads)",
    ("kclient", "tasks"): "kclient get (tasks; producer tasks)",
    ("client-go", "goroutines"): "client-go (goroutines)",
}
API_NAMES = {"blocking": "get_blocking", "async": "get", "tasks": "get, producer tasks"}


def med(values):
    return statistics.median(values)


def fmt_range(values, digits=3, unit=""):
    m = med(values)
    return f"{m:.{digits}f}{unit} ({min(values):.{digits}f}-{max(values):.{digits}f})"


def fmt_int_range(values):
    return f"{med(values):,.0f} ({min(values):,}-{max(values):,})"


def load(path):
    drain = defaultdict(list)
    busy = defaultdict(list)
    delayed = defaultdict(list)
    fire = defaultdict(list)
    threads = {}
    control = defaultdict(list)
    with open(path) as f:
        for line in f:
            r = json.loads(line)
            if r.get("control"):
                control[(r["impl"], r["api"])].append(r)
            elif r["bench"] == "drain" and r.get("work", "none") != "none":
                busy[(r["impl"], r["api"], r["producers"], r["work"])].append(r)
            elif r["bench"] == "drain":
                drain[(r["impl"], r["api"], r["producers"], r["keys"])].append(r)
            elif r["bench"] == "delayed":
                delayed[(r["impl"], r["kind"])].append(r)
            elif r["bench"] == "fire":
                fire[r["impl"]].append(r)
            elif r["bench"] == "threads":
                threads[r["impl"]] = r
    return drain, busy, delayed, fire, threads, control


def col(runs, field):
    return [r[field] for r in runs]


def side_cells(runs_of, text):
    """One table cell per side of SIDES: `text(runs)` of that side's runs (`runs_of(side)`), or
    empty when it has none."""
    return [text(runs) if (runs := runs_of(side)) else "" for side in SIDES]


def latency_cell(runs):
    """A latency table cell: p50 / p99 / maximum (medians), the p99's range, and the median
    number of samples (records from before the maximum was measured show p50 / p99 only)."""
    cell = f"{med(col(runs, 'p50_us')):,.0f} / {med(col(runs, 'p99_us')):,.0f}"
    if all("max_us" in run for run in runs):
        cell += f" / {med(col(runs, 'max_us')):,.0f}"
    cell += f"<br>(p99 {min(col(runs, 'p99_us')):,.0f}-{max(col(runs, 'p99_us')):,.0f}"
    if all("samples" in run for run in runs):
        cell += f"; {med(col(runs, 'samples')):,.0f} samples"
    return cell + ")"


def peak_rss_mib(runs):
    """The median peak RSS of `runs` in MiB, as the programs reported it (`peak_rss_kb`), or
    None when a run has none (earlier records)."""
    if not runs or not all("peak_rss_kb" in run for run in runs):
        return None
    return med(col(runs, "peak_rss_kb")) / 1024


def rss_text(runs):
    """The median peak RSS of `runs` as a table cell's second line, or nothing without one."""
    mib = peak_rss_mib(runs)
    return "" if mib is None else f"<br>{mib:.1f} MiB"


def p99_rank(samples):
    """Which sample, counted from the highest, a run's p99 is when it has `samples` of them:
    `percentile` takes sample round((n - 1) * 0.99) counted from the lowest."""
    return samples - round((samples - 1) * 0.99)


def fmt_span(values):
    """`lo-hi` of `values`, or the one value when they are all equal."""
    lo, hi = min(values), max(values)
    return f"{lo:,.0f}" if lo == hi else f"{lo:,.0f}-{hi:,.0f}"


def samples_text(drain):
    """A sentence on how many samples a run's p99 with repeated keys rests on at 8 x 8 and
    32 x 32, for kclient's producer-thread drains and for client-go (median sample counts of
    this run)."""
    kclient = [drain[("kclient", api, size, "repeated")]
               for api in ["blocking", "async"] for size in [8, 32]]
    go = [drain[("client-go", "goroutines", size, "repeated")] for size in [8, 32]]
    k, g = ([med(col(runs, "samples")) for runs in cells
             if runs and all("samples" in run for run in runs)] for cells in (kclient, go))
    if not k or not g:
        return ""
    return (
        f"At 8 x 8 and 32 x 32 in this run, a run of `get_blocking` or `get` with producer threads "
        f"gave a median of {fmt_span(k)} samples, so its p99 was the sample ranked "
        f"{fmt_span([p99_rank(n) for n in k])} from the top; client-go's runs gave {fmt_span(g)}, "
        f"and its p99 was ranked {fmt_span([p99_rank(n) for n in g])} from the top."
    )


def max_text(drain):
    """A sentence on the maximum latency with repeated keys at 8 x 8 and 32 x 32: in which
    cells kclient's median maximum is below client-go's, and which are not."""
    lower, higher = [], []
    for size in [8, 32]:
        g = drain[("client-go", "goroutines", size, "repeated")]
        for api in ["blocking", "async", "tasks"]:
            k = drain[("kclient", api, size, "repeated")]
            if not k or not g or not all("max_us" in run for run in k + g):
                continue
            cell = f"{API_NAMES[api]} {size} x {size}"
            (lower if med(col(k, "max_us")) < med(col(g, "max_us")) else higher).append(cell)
    if not lower and not higher:
        return ""
    text = f"In this run kclient's is the lower in {len(lower)} of {len(lower) + len(higher)} cells"
    if higher:
        text += "; not in " + ", ".join(higher)
    return text + "."


def ratio_text(drain, api, size, keys):
    """`kclient s against client-go s (ratio)` for one drain measurement."""
    k = med(col(drain[("kclient", api, size, keys)], "seconds"))
    g = med(col(drain[("client-go", "goroutines", size, keys)], "seconds"))
    return f"{k:.3f} s against {g:.3f} s ({k / g:.2f}x)"


def holding_cost_text(drain):
    """How the queue's drains of distinct keys compare with those of the queue before holding
    in this run, per API, as a range over the sizes (empty without a `kclient-before` side)."""
    parts = []
    for api, name in API_NAMES.items():
        changes = []
        for size in SIZES:
            after = drain[("kclient", api, size, "distinct")]
            before = drain[("kclient-before", api, size, "distinct")]
            if after and before:
                changes.append((med(col(after, "seconds")) / med(col(before, "seconds")) - 1) * 100)
        if changes:
            parts.append(f"{name} {min(changes):+.0f} to {max(changes):+.0f} %")
    if not parts:
        return ""
    return (
        ": in this run, the drain time of the queue against the one before holding, by API over"
        " the sizes, was " + "; ".join(parts)
    )


def items_text(drain, impl, api, size):
    """Median items processed with repeated keys."""
    return f"{med(col(drain[(impl, api, size, 'repeated')], 'processed')):,.0f}"


def before_after_text(drain, api, size, keys):
    """`before s and after s` of one drain measurement."""
    b = med(col(drain[("kclient-before", api, size, keys)], "seconds"))
    a = med(col(drain[("kclient", api, size, keys)], "seconds"))
    return f"{b:.3f} s and {a:.3f} s"


# A cross-core round trip at or above this many ns counts as a "far" placement of the two vCPUs.
FAR_NS = 250


def placement_lines(drain):
    """The cross-core round trips measured before the runs, and the drains with distinct keys
    split by placement; returns markdown lines (none without the probe)."""
    probes = [r["cross_core_ns"] for runs in drain.values() for r in runs if "cross_core_ns" in r]
    if not probes:
        return []
    far = sum(1 for ns in probes if ns >= FAR_NS)
    near = [ns for ns in probes if ns < FAR_NS]
    near_text = f"{min(near):,.0f}-{max(near):,.0f} ns" if near else "none"
    lines = [
        "**Where the two vCPUs sat.** Before each run the driver timed a cross-core round trip "
        "(`kclient-bench-workqueue pingpong 100000`: two threads hand a token through one atomic). "
        f"Median {med(probes):,.0f} ns, range {min(probes):,.0f}-{max(probes):,.0f}; "
        f"{far} of {len(probes)} runs found the vCPUs far apart (at least {FAR_NS} ns), the others "
        f"near ({near_text}). The placement is the hypervisor's and changes from one minute to "
        "the next; a queue that hands items between threads moves cache lines between the cores "
        "with every item, so the drains with distinct keys split in two by it. Medians by "
        "placement (runs in brackets):",
        "",
        "| P x W, distinct keys | kclient get_blocking near | far | client-go near | far | "
        "get_blocking / client-go near | far |",
        "|---|--:|--:|--:|--:|--:|--:|",
    ]
    for size in SIZES:
        cells, meds = [], {}
        for impl, api in [("kclient", "blocking"), ("client-go", "goroutines")]:
            runs = [r for r in drain[(impl, api, size, "distinct")] if "cross_core_ns" in r]
            for is_far in [False, True]:
                chosen = [r["seconds"] for r in runs if (r["cross_core_ns"] >= FAR_NS) == is_far]
                meds[(impl, is_far)] = med(chosen) if chosen else None
                cells.append(f"{meds[(impl, is_far)]:.3f} ({len(chosen)})" if chosen else "-")
        for is_far in [False, True]:
            k, g = meds[("kclient", is_far)], meds[("client-go", is_far)]
            cells.append(f"{k / g:.2f}x" if k and g else "-")
        lines.append(f"| {size} x {size} | " + " | ".join(cells) + " |")
    return lines


def lower_rounds(k, g, field):
    """In how many rounds kclient's `field` was below client-go's in the same round (the two
    ran one after the other), as "N of M": a paired count, which tells a steady difference
    from the spread that the medians alone hide."""
    theirs = {run["round"]: run[field] for run in g if "round" in run}
    pairs = [(run[field], theirs[run["round"]]) for run in k if run.get("round") in theirs]
    if not pairs:
        return ""
    return f"{sum(1 for a, b in pairs if a < b)} of {len(pairs)}"


def control_text(drain, control):
    """What the control drain (32 x 32, 1,000 adds: next to no work for the queue) says of the
    whole-process CPU figures, from this run."""
    sides = [("kclient", "blocking"), ("kclient", "async"), ("client-go", "goroutines")]
    if not all(control[side] for side in sides):
        return ""
    names = {**API_NAMES, "goroutines": "client-go"}
    parts = []
    for impl, api in sides:
        full = drain[(impl, api, 32, "repeated")]
        parts.append(
            f"{names[api]} {med(col(control[(impl, api)], 'sys_s')):.3f} s with 1,000 adds and "
            f"{med(col(full, 'sys_s')):.3f} s with {med(col(full, 'adds')):,.0f}"
        )
    return (
        "A control drain at 32 x 32 with 1,000 adds, in every round, gives the queue next to nothing "
        "to do; the whole process's system time (medians) was " + "; ".join(parts) + ". What "
        "the process costs around the drain, its threads above all, is no part of the queue's "
        "work, so the target's \"sys <= user\" is judged on the drain's own CPU."
    )


def drain_cpu(runs, combine=med):
    """User and system CPU seconds of the drains themselves (the programs' own getrusage from the
    first add to the last worker's exit; the whole process's for a record from before the
    programs measured it), combined over the rounds: their medians by default, or their sums for
    the targets' "sys <= user". Linux on these machines accounts CPU time by ticks
    (CONFIG_TICK_CPU_ACCOUNTING, 250 Hz): each 4 ms tick goes to user or system time by where it
    found the thread, so a drain of a few milliseconds of CPU splits on 2-4 samples, and the
    medians of its two halves can flip from one run of the benchmark to the next. Summed over the
    rounds, the split rests on all of them."""
    if all("drain_user_s" in run for run in runs):
        return combine(col(runs, "drain_user_s")), combine(col(runs, "drain_sys_s"))
    return combine(col(runs, "user_s")), combine(col(runs, "sys_s"))


def targets(drain, busy):
    """The issue's targets, checked on the medians; returns markdown lines. The merging target
    is checked in the drains with idle workers (the issue's measurement) and, on rows of their
    own, in those whose workers compute or sleep per item."""
    lines = []
    for api in ["blocking", "async", "tasks"]:
        name = API_NAMES[api]
        for size in [8, 32]:
            for keys in KEYS:
                k = drain[("kclient", api, size, keys)]
                g = drain[("client-go", "goroutines", size, keys)]
                if not k or not g:
                    continue
                ratio = med(col(k, "seconds")) / med(col(g, "seconds"))
                p99k, p99g = med(col(k, "p99_us")), med(col(g, "p99_us"))
                user, sys = drain_cpu(k, sum)
                sys_ok = sys <= user
                ok = ratio <= 0.5 and p99k < p99g and sys_ok
                lines.append(
                    f"| {name} {size} x {size} {keys} | {ratio:.2f}x | {p99k:,.0f} vs {p99g:,.0f} us | "
                    f"{lower_rounds(k, g, 'p99_us')} | "
                    f"{'yes' if sys_ok else 'no'} | {'met' if ok else '**missed**'} |"
                )
        k = drain[("kclient", api, 1, "distinct")]
        g = drain[("client-go", "goroutines", 1, "distinct")]
        for keys in KEYS:
            k = drain[("kclient", api, 1, keys)]
            g = drain[("client-go", "goroutines", 1, keys)]
            if k and g:
                ratio = med(col(k, "seconds")) / med(col(g, "seconds"))
                lines.append(
                    f"| {name} 1 x 1 {keys} (no slower) | {ratio:.2f}x | | | | "
                    f"{'met' if ratio <= 1.0 else '**missed**'} |"
                )
        for size in SIZES:
            k = drain[("kclient", api, size, "repeated")]
            g = drain[("client-go", "goroutines", size, "repeated")]
            if k and g:
                pk, pg = med(col(k, "processed")), med(col(g, "processed"))
                lines.append(
                    f"| {name} {size} x {size} repeated: items processed (merging) | "
                    f"{pk:,.0f} vs {pg:,.0f} | | | | {'met' if pk <= pg else '**missed**'} |"
                )
        for work in sorted({key[3] for key in busy}):
            for size in SIZES:
                k = busy[("kclient", api, size, work)]
                g = busy[("client-go", "goroutines", size, work)]
                if k and g:
                    pk, pg = med(col(k, "processed")), med(col(g, "processed"))
                    lines.append(
                        f"| {name} {size} x {size} repeated, worker {work_text(work)}: items "
                        f"processed (merging) | {pk:,.0f} vs {pg:,.0f} | | | | "
                        f"{'met' if pk <= pg else '**missed**'} |"
                    )
    return lines


def svg_chart(drain, path):
    """Two panels (distinct keys, repeated keys), each on its own scale: grouped bars of the
    median drain time per producers x workers and side, with min-max whiskers."""
    colors = ["#1f77b4", "#2ca02c", "#9467bd", "#d62728"]
    width, height = 960, 400
    top, bottom, gap = 48, 84, 70
    panel_w = (width - 70 - 20 - gap) / 2
    plot_h = height - top - bottom
    out = [
        f'<svg xmlns="http://www.w3.org/2000/svg" width="{width}" height="{height}" '
        f'font-family="sans-serif" font-size="11">',
        f'<rect width="{width}" height="{height}" fill="white"/>',
        f'<text x="{width / 2}" y="18" text-anchor="middle" font-size="14">'
        f"Workqueue drain time, 400,000 adds: median, whiskers min-max (lower is better)</text>",
    ]
    for ki, keys in enumerate(KEYS):
        left = 70 + ki * (panel_w + gap)
        top_value = 0.0
        for size in SIZES:
            for impl, api in SIDES:
                runs = drain[(impl, api, size, keys)]
                if runs:
                    top_value = max(top_value, max(col(runs, "seconds")))
        top_value = top_value * 1.1 or 1.0

        def y(v, top_value=top_value):
            return top + plot_h - v / top_value * plot_h

        title = "distinct keys" if keys == "distinct" else "1,000 repeated keys"
        out.append(f'<text x="{left + panel_w / 2:.1f}" y="38" text-anchor="middle" font-size="12">{title}</text>')
        for i in range(6):
            v = top_value * i / 5
            out.append(f'<line x1="{left:.1f}" x2="{left + panel_w:.1f}" y1="{y(v):.1f}" y2="{y(v):.1f}" stroke="#ddd"/>')
            label = f"{v * 1000:.0f} ms" if top_value < 0.2 else f"{v:.2f} s"
            out.append(f'<text x="{left - 6:.1f}" y="{y(v) + 4:.1f}" text-anchor="end">{label}</text>')
        group_w = panel_w / len(SIZES)
        bar_w = group_w / (len(SIDES) + 1)
        for gi, size in enumerate(SIZES):
            gx = left + gi * group_w
            for si, side in enumerate(SIDES):
                runs = drain[(side[0], side[1], size, keys)]
                if not runs:
                    continue
                values = col(runs, "seconds")
                x = gx + bar_w * (si + 0.5)
                m = med(values)
                out.append(
                    f'<rect x="{x:.1f}" y="{y(m):.1f}" width="{bar_w:.1f}" height="{y(0) - y(m):.1f}" '
                    f'fill="{colors[si]}"/>'
                )
                cx = x + bar_w / 2
                out.append(
                    f'<line x1="{cx:.1f}" x2="{cx:.1f}" y1="{y(min(values)):.1f}" '
                    f'y2="{y(max(values)):.1f}" stroke="black"/>'
                )
            out.append(
                f'<text x="{gx + group_w / 2:.1f}" y="{top + plot_h + 16}" text-anchor="middle">'
                f"{size} x {size}</text>"
            )
    for si, side in enumerate(SIDES):
        lx = 20 + si * 235
        out.append(f'<rect x="{lx}" y="{height - 30}" width="12" height="12" fill="{colors[si]}"/>')
        out.append(f'<text x="{lx + 16}" y="{height - 20}">{SIDE_NAMES[side]}</text>')
    out.append(f'<text x="70" y="{height - 4}" font-size="10">producers x workers; '
               f"each panel on its own scale</text>")
    out.append("</svg>")
    with open(path, "w") as f:
        f.write("\n".join(out) + "\n")


def work_text(work):
    """`busy:20` as "computes 20 us", `wait:1000` as "sleeps 1,000 us"."""
    kind, us = work.split(":")
    return f"{'computes' if kind == 'busy' else 'sleeps'} {int(us):,} us"


def busy_lines(busy):
    """The drains with working workers (repeated keys; each worker computes or sleeps for a
    while per item); returns markdown lines (none if the run had none)."""
    works = sorted({key[3] for key in busy})
    if not works:
        return []
    lines = [
        "**Merging when the workers work.** In the drains above the workers do nothing, so they",
        "take most items before a second add of the same key comes, and fewer items processed",
        "there mostly means slower workers. Here the same drains with 1,000 repeated keys give",
        "each worker something to do per item before `done`: it computes for 20 us (spins, as a",
        "reconcile that computes would) or sleeps for 1 ms (`thread::sleep` on threads,",
        "`tokio::time::sleep` in tasks, `time.Sleep` in Go: a reconcile that waits for the API",
        "server). The workers are then the bottleneck, items wait, and repeated adds merge into",
        "them. Drain time, items processed (medians, range in brackets) and add-to-get p99 in us:",
        "",
        "| worker per item | P x W | " + " | ".join(SIDE_NAMES[s] for s in SIDES) + " |",
        "|---|---|--:|--:|--:|--:|",
    ]
    for work in works:
        for size in SIZES:
            cells = side_cells(
                lambda side: busy[(side[0], side[1], size, work)],
                lambda runs: f"{fmt_range(col(runs, 'seconds'))}<br>"
                f"{fmt_int_range(col(runs, 'processed'))} items<br>p99 {med(col(runs, 'p99_us')):,.0f}",
            )
            lines.append(f"| {work_text(work)} | {size} x {size} | " + " | ".join(cells) + " |")
    busy_work = next((w for w in works if w.startswith("busy:")), None)
    if busy_work:

        def items(side, sizes):
            """Median items processed by `side` at each size, as `a-b` over the sizes."""
            meds = [med(col(busy[(side[0], side[1], size, busy_work)], "processed"))
                    for size in sizes if busy[(side[0], side[1], size, busy_work)]]
            return f"{min(meds):,.0f}-{max(meds):,.0f}" if meds else "-"

        def ratio(api, size):
            k = busy[("kclient", api, size, busy_work)]
            g = busy[("client-go", "goroutines", size, busy_work)]
            if not k or not g:
                return "-"
            return (f"{med(col(k, 'processed')) / med(col(g, 'processed')):.1f}x the items in "
                    f"{med(col(k, 'seconds')) / med(col(g, 'seconds')):.1f}x the time")

        larger = [size for size in SIZES if size > 1]
        lines += [
            "",
            f"With workers that compute, at {larger[0]} x {larger[0]} and above client-go processed "
            f"{items(('client-go', 'goroutines'), larger)} items (medians by size), kclient's "
            f"`get_blocking` {items(('kclient', 'blocking'), larger)} and `get` with producer "
            f"threads {items(('kclient', 'async'), larger)}. With producer *tasks* kclient "
            f"processed {items(('kclient', 'tasks'), larger)} (at 8 x 8 {ratio('tasks', 8)} of "
            "client-go's), and at 1 x 1 "
            f"{med(col(busy[('kclient', 'tasks', 1, busy_work)], 'processed')):,.0f} against "
            f"client-go's {med(col(busy[('client-go', 'goroutines', 1, busy_work)], 'processed')):,.0f}"
            ": tokio's scheduler is cooperative and counts operations, not time. A "
            "producer task gives its runtime thread back after 128 adds (its budget), a worker "
            "after 128 items or when the queue runs dry, so a worker computing 20 us per item "
            "holds the thread for up to 2.5 ms per turn and a producer for microseconds. "
            "At 1 x 1 the two tasks can also fall into step on one runtime thread while the "
            "other stays idle: a log of every pause of over 300 us in the producer task "
            "(session 31, `drain tasks 1 1 repeated 400000 busy:20`, not committed) showed it "
            "adding 128 keys, then waiting 2.6-2.8 ms while the worker served 128 items on the "
            "same thread, eight times over in the first 22 ms of a run, before the worker moved "
            "to the other thread. Both tasks yield through tokio's deferred wake-ups, and when the "
            "thread runs out of other work it wakes them in turn: the worker goes to the LIFO "
            "slot, which no other thread may steal from, and the producer to the run queue, "
            "which the same thread takes again before the idle one, just notified, looks. In "
            "five runs the producer task needed 12.7-579 ms for its adds, against 5.8-10 ms for a "
            "producer thread in three runs of `drain blocking 1 1 repeated 400000 busy:20`; "
            "while it waits, the worker serves items, so the items processed grow with it. The "
            "worker lands in that slot because the producer task's add wakes it from that "
            "thread; handing every wake-up to another thread instead would cost each one a hop "
            "between threads, which on a busy machine waits for a CPU (70-850 us for the timer "
            "thread, fifth pass). The "
            "merge window (fifth pass) makes items wait for their keys to come back; before it, "
            "with producer tasks these rows processed 51,000-104,000 items at 2 x 2 and above. "
            "Workers that wait (`sleeps`) give the thread back at every item and "
            "merge like the others. Work that computes for long belongs on worker threads "
            "(`get_blocking`) or in `spawn_blocking`, as tokio's documentation says. In the "
            "`sleeps` rows the drain time is mostly the sleeps: tokio's timer rounds a 1 ms sleep "
            "up to its next millisecond tick, so one takes about 2 ms in a task and about 1.1 ms "
            "on a thread or in Go.",
            "",
        ]
    else:
        lines.append("")
    return lines


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--results", required=True)
    parser.add_argument("--svg", required=True)
    parser.add_argument("--svg-link", required=True)
    parser.add_argument("--command", required=True)
    parser.add_argument("--versions", required=True)
    parser.add_argument("--source", required=True)
    args = parser.parse_args()
    drain, busy, delayed, fire, threads, control = load(args.results)
    rounds = max((len(v) for v in drain.values()), default=0)
    svg_chart(drain, args.svg)

    p = print
    p("## Workqueue under contention (kclient and client-go, one run, interleaved)")
    p()
    p(f"`{args.command}` ({rounds} rounds; {args.source}; {args.versions}). Each figure is the median")
    p("over the rounds with the range in brackets; each measurement is its own process, and the")
    p("programs take turns within every round. What is measured, and how, is in")
    p("`bench/README.md` (Workqueue). 2 cores, shared with other work on the machine.")
    loads = [r["load1"] for runs in drain.values() for r in runs if "load1" in r]
    if loads:
        p(f"The 1-minute load average as each measurement started: median {med(loads):.1f}")
        p(f"(range {min(loads):.1f}-{max(loads):.1f}). It counts the benchmark's own threads too (a")
        p("32 x 32 drain runs 64, and the average trails by a minute), so a high figure does not by")
        p("itself mean that other work shared the cores; the cross-core round trip below tells more")
        p("about the conditions of each run.")
    p()
    for line in placement_lines(drain):
        p(line)
    p()
    p(f"![drain time]({args.svg_link})")
    p()
    p("**Drain time** (seconds from the first add until every worker has stopped after")
    p("`shut_down_with_drain_blocking`) and **items processed** (gets; fewer = more adds merged into items")
    p("already waiting). 400,000 adds in all, producers x workers as in the first column.")
    p()
    p("| P x W | keys | " + " | ".join(SIDE_NAMES[s] for s in SIDES)
      + " | get_blocking / client-go | get / client-go | get, producer tasks / client-go |")
    p("|---|---|--:|--:|--:|--:|--:|--:|--:|")
    for keys in KEYS:
        for size in SIZES:
            cells = []
            meds = []
            for side in SIDES:
                runs = drain[(side[0], side[1], size, keys)]
                if not runs:
                    cells.append("")
                    meds.append(None)
                    continue
                t = fmt_range(col(runs, "seconds"))
                if keys == "repeated":
                    t += f"<br>{fmt_int_range(col(runs, 'processed'))} items"
                cells.append(t)
                meds.append(med(col(runs, "seconds")))
            ratios = [f"{m / meds[3]:.2f}x" if m and meds[3] else "" for m in meds[:3]]
            p(f"| {size} x {size} | {keys} | " + " | ".join(cells) + " | " + " | ".join(ratios) + " |")
    p()
    p("**Add-to-get latency**, p50 / p99 / maximum in microseconds (from the earliest add not yet")
    p("served to the `get` that serves the key, on every 16th key; every get of one is a sample),")
    p("medians over the rounds, with the range of the p99 and the median number of samples per run:")
    p()
    p("| P x W | keys | " + " | ".join(SIDE_NAMES[s] for s in SIDES) + " |")
    p("|---|---|--:|--:|--:|--:|")
    for keys in KEYS:
        for size in SIZES:
            cells = side_cells(
                lambda side: drain[(side[0], side[1], size, keys)],
                latency_cell,
            )
            p(f"| {size} x {size} | {keys} | " + " | ".join(cells) + " |")
    p()
    p("**Where the p99 with repeated keys comes from.** Items queued in the same quarter of a")
    p("merge window go out together, and a run of `get_blocking` or `get` with producer threads")
    p("at 8 x 8 or 32 x 32 lasts a few milliseconds and gives a few hundred samples (the counts")
    p("above), so its p99 is the latency of its worst batch or close to it. Logging every sample")
    p("of `drain blocking 8 8 repeated` (session 30, six runs, not committed) put the six longest")
    p("of each run in one batch: keys first added in the first 15 us, before any key had come")
    p("back (so nothing was held), served together 714-1,012 us later, or items queued 1.25 ms in")
    p("served at 2.08 ms. `perf sched timehist` of such a run showed worker threads waiting up to")
    p("2.7 ms between their wake-up and a core, with eight producer threads keeping both cores")
    p("busy: the kernel's scheduling, not the queue, sets those batches' wait. A log of every")
    p("hold's end in six runs of `drain blocking 32 32 repeated` (session 32, after the sixth pass")
    p("below, not committed) showed the holds ending on time: 121 of 126 within 150 us of their")
    p("deadline (104 within 30 us), mostly by an add; the other five 158-426 us")
    p("late, four of them by the timer thread. The worst batches of those runs went out 220 us to")
    p("1.1 ms after their hold's time, when the workers woken for them, or those already on their")
    p("way, reached a core; single keys waited longer still (2.2-3.7 ms), for causes the log does")
    p("not show. client-go's runs")
    p("serve up to 30 times the items and give thousands of samples, so its p99 lies below its")
    p("own worst batch: the maximum column compares the worst waits directly. " + max_text(drain))
    p()
    p("**CPU seconds**, user / sys, medians: first of the drain (the program's own `getrusage`")
    p("from the first add to the last worker's exit, all threads), then of the whole process")
    p("(`getrusage` of the child: also the process's start and exit and the creation of its")
    p("threads), and the **peak RSS** in MiB (the program's `VmHWM` as it ends):")
    p()
    p("| P x W | keys | " + " | ".join(SIDE_NAMES[s] for s in SIDES) + " |")
    p("|---|---|--:|--:|--:|--:|")
    for keys in KEYS:
        for size in SIZES:
            cells = side_cells(
                lambda side: drain[(side[0], side[1], size, keys)],
                lambda runs: "{:.3f} / {:.3f}<br>process {:.3f} / {:.3f}".format(
                    *drain_cpu(runs), med(col(runs, "user_s")), med(col(runs, "sys_s"))
                )
                + rss_text(runs),
            )
            p(f"| {size} x {size} | {keys} | " + " | ".join(cells) + " |")
    p()
    for line in busy_lines(busy):
        p(line)
    p("**Delayed adds with 100,000 items pending**: a rate-limiting queue with the default")
    p("controller rate limiter holds 100,000 items (waiting an hour with `add_after`, or their")
    p("limiter's delay with `add_rate_limited`); then 100,000 more calls of new items are timed.")
    p("**Fire**: 100,000 `add_after` with delays spread evenly over 100 ms (added in shuffled")
    p("order), 2 worker threads; time until the last item was processed and how late items")
    p("reached a worker after their ready time.")
    p()
    p("| | kclient | client-go | kclient / client-go |")
    p("|---|--:|--:|--:|")
    for kind in ["add_after", "add_rate_limited"]:
        k, g = delayed[("kclient", kind)], delayed[("client-go", kind)]
        if k and g:
            p(
                f"| `{kind}`, ns per call | {fmt_range(col(k, 'ns_per_call'), 0)} | "
                f"{fmt_range(col(g, 'ns_per_call'), 0)} | "
                f"{med(col(k, 'ns_per_call')) / med(col(g, 'ns_per_call')):.2f}x |"
            )
    k, g = fire["kclient"], fire["client-go"]
    if k and g:
        p(f"| fire: seconds until all processed | {fmt_range(col(k, 'seconds'))} | {fmt_range(col(g, 'seconds'))} | "
          f"{med(col(k, 'seconds')) / med(col(g, 'seconds')):.2f}x |")
        p(f"| fire: lateness p50 / p99, us | {med(col(k, 'late_p50_us')):,.0f} / {med(col(k, 'late_p99_us')):,.0f} | "
          f"{med(col(g, 'late_p50_us')):,.0f} / {med(col(g, 'late_p99_us')):,.0f} | |")
        p(f"| fire: CPU user / sys, s | {med(col(k, 'user_s')):.3f} / {med(col(k, 'sys_s')):.3f} | "
          f"{med(col(g, 'user_s')):.3f} / {med(col(g, 'sys_s')):.3f} | |")
    for name, k, g in [
        ("`add_after`", delayed[("kclient", "add_after")], delayed[("client-go", "add_after")]),
        ("`add_rate_limited`", delayed[("kclient", "add_rate_limited")],
         delayed[("client-go", "add_rate_limited")]),
        ("fire", fire["kclient"], fire["client-go"]),
    ]:
        rk, rg = peak_rss_mib(k), peak_rss_mib(g)
        if rk is not None and rg is not None:
            p(f"| {name}: peak RSS, MiB | {rk:.1f} | {rg:.1f} | {rk / rg:.2f}x |")
    p()
    if threads:
        k, g = threads.get("kclient"), threads.get("client-go")
        p("**Threads** of a process holding 40 delaying queues, each with an item waiting an hour:")
        if k:
            p(f"kclient {k['threads_with_queues']} OS threads ({k['threads_before']} before the queues);", end=" ")
        if g:
            p(f"client-go {g['threads_with_queues']} ({g['threads_before']} before; goroutines are not threads).")
        p()
    if any(k[0] == "kclient-before" for k in drain):
        p("**Before and after**, in the same run (`kclient-before`: the same harness built")
        p("on the queue of the commit given to the run script): median drain time, CPU user / sys, and")
        p("items processed with repeated keys.")
        p()
        p("| P x W | keys | get_blocking before | get_blocking after | get before | get after "
          "| get, producer tasks, before | get, producer tasks, after | client-go |")
        p("|---|---|--:|--:|--:|--:|--:|--:|--:|")
        for keys in KEYS:
            for size in SIZES:
                cells = []
                for impl, api in [("kclient-before", "blocking"), ("kclient", "blocking"),
                                  ("kclient-before", "async"), ("kclient", "async"),
                                  ("kclient-before", "tasks"), ("kclient", "tasks"),
                                  ("client-go", "goroutines")]:
                    runs = drain[(impl, api, size, keys)]
                    if not runs:
                        cells.append("")
                        continue
                    cell = (f"{med(col(runs, 'seconds')):.3f} s<br>{med(col(runs, 'user_s')):.2f} / "
                            f"{med(col(runs, 'sys_s')):.2f} cpu")
                    if keys == "repeated":
                        cell += f"<br>{med(col(runs, 'processed')):,.0f} items"
                    cells.append(cell)
                p(f"| {size} x {size} | {keys} | " + " | ".join(cells) + " |")
        p()
        for kind in ["add_after", "add_rate_limited"]:
            b = delayed[("kclient-before", kind)]
            if b:
                p(f"`{kind}` before: {med(col(b, 'ns_per_call')):,.0f} ns per call.", end=" ")
        b = fire["kclient-before"]
        if b:
            p(f"Fire before: {med(col(b, 'seconds')):.3f} s, lateness p50 / p99 "
              f"{med(col(b, 'late_p50_us')):,.0f} / {med(col(b, 'late_p99_us')):,.0f} us.", end=" ")
        b = threads.get("kclient-before")
        if b:
            p(f"Threads with 40 delaying queues before: {b['threads_with_queues']}.", end="")
        p()
        p()
    p("**Where the time went, and what changed** (`perf record -g`, release harness with frame")
    p("pointers; `workqueue/README.md` has the details). Before: in `drain blocking 8 8 repeated`")
    p("46 % of samples were in the kernel, mostly `finish_task_switch` (workers parked in")
    p("`futex_wait` from `Condvar::wait` in `get_blocking`) and `try_to_wake_up` (producers' `notify_one` in")
    p("`add`); at 32 x 32 distinct keys, `get_blocking`'s futex wait was 17 % and `add`'s wake 14 %. The first")
    p("pass made the queue wake an idle worker only when no wake-up was in flight and no worker")
    p("spun, chain wake-ups through a backlog, and spin briefly before parking. The next profile (distinct")
    p("keys) showed cache misses in the one item map under the one lock (31 % in the lookup at pop);")
    p("the maps are now 32 shards with a cheaper hash and two-flag entries. With one timer thread for")
    p("every queue, a getter that finds the FIFO empty moves due delayed items itself.")
    p()
    p("**Second pass** (issue 21, commit f987fb2).")
    p("`perf record -g` of `drain async 8 8 distinct` put 44 % of samples in `hand_out`, nearly all")
    p("on the two loads of the popped item's hashbrown slot (control bytes 29 %, bucket 63 % of the")
    p("function), and 33 % in `enqueue` (the insert's stores, charged to the shard unlock): with")
    p("distinct keys and a backlog, each item's slot was last written by a producer on the other")
    p("core, or has left the cache. The async workers meet the largest backlog, because the two")
    p("runtime threads share the 2 cores with P producer threads. Tried and dropped: an")
    p("open-addressing table holding hash, item and state in one slot (one line per lookup instead")
    p("of two); the profile showed the one load, but on one thread adding 400,000 items took 17 %")
    p("longer and draining them 5 % longer than with hashbrown (means of 4 runs; bigger slots, a")
    p("lower load factor, no SIMD probing). Kept:")
    p("a backlog wakes one parked thread per 256 waiting items instead of one at a time (in")
    p("`drain blocking 32 32 repeated` p50 was about p99: every key waited while the chain of")
    p("wake-ups, each woken worker first waiting for a core behind 32 producers, brought the")
    p("workers in one by one); and the state's lock sits on cache lines of its own (`offset_of!`")
    p("showed it sharing lines with the hasher seed and the shard pointer that every operation")
    p("reads).")
    p()
    p("**Third pass: tasks beside tasks** (issue 21, commit ea1a93c). An async `get` that takes")
    p("an item now spends a unit of tokio's")
    p("cooperative budget, as a tokio channel's `recv` does. Before, a worker task whose items were")
    p("always ready never gave its runtime thread back while a backlog lasted, so the tasks beside")
    p("it waited until the queue ran dry (`workqueue/src/queue.rs`, test")
    p("`a_worker_with_items_always_ready_lets_other_tasks_run`). The \"producer tasks\" column is")
    p("new: producers and workers are all tasks on the runtime, as client-go's are all goroutines.")
    p()
    p("**Reading the figures.** In the `get (tasks; producer threads)` column the producers are")
    p("threads (as in the `get_blocking` column) and the workers tokio tasks on a runtime with one")
    p("thread per core, so while the producers run, the two runtime threads compete for two cores")
    p("with P producer threads: the workers get 2 / (P + 2) of the CPU, against about half in")
    p("client-go's program, and with distinct keys, where every add is work, a backlog builds and")
    p("sets the p99. With the producers on the runtime too (`producer tasks`), the same queue")
    p(f"serves distinct keys at 8 x 8 with a p99 of {med(col(drain[('kclient', 'tasks', 8, 'distinct')], 'p99_us')):,.0f} us")
    p(f"(client-go {med(col(drain[('client-go', 'goroutines', 8, 'distinct')], 'p99_us')):,.0f} us). With repeated keys the latency of every")
    p("kclient column starts at the merge window (500 us by default, see the fifth pass below):")
    p("an item queued while the queue holds waits that long on purpose. Linux splits CPU time")
    p("into user and system by scheduler ticks (250 a second here), and the repeated-key rows last")
    p("5-40 ms, so their split is coarse in any one run. The whole process's figure also counts")
    p("creating the threads, which the drain's does not. " + control_text(drain, control))
    p()
    p("**With repeated keys a run's p99 rests on few samples.** Latency is sampled on every 16th")
    p("key, per item served. " + samples_text(drain))
    p("Sampling every key instead (21 interleaved rounds in session 29, not kept because the extra")
    p("clock reads slowed client-go's 32 x 32 drain by a third) put the p99 of `get_blocking` and")
    p("`get` (producer threads) at 1,529 and 1,844 us against client-go's 1,179 us at 8 x 8, and at")
    p("1,157 and 1,565 us against 782 us at 32 x 32, with producer tasks at 751 and 715 us: the p99")
    p("targets with repeated keys are missed by more than these medians suggest, except with")
    p("producer tasks.")
    p()
    p("**What sets the tail with many threads: lock holders preempted** (issue 21, session 29).")
    p("With P producer and W worker threads on two cores, Linux preempts threads inside the queue's")
    p("short critical sections. A build that logged every lock wait over 150 us (not committed)")
    p("showed, in `drain async 8 8 repeated`, workers waiting 1.8-7.3 ms for a shard's lock in")
    p("`mark_processing` and up to 3.1 ms for the state's lock, and producers as long for theirs:")
    p("the holder, preempted inside its critical section, waited for its next turn among ten")
    p("runnable threads. A wake-up log of the same drain showed the longest stalls: a backlog")
    p("growing to 1,000 items over 5.6 ms with seven tasks idle and the eighth never back, while")
    p("the one notification in flight had gone, by tokio's rules for a wake-up from a task, to the")
    p("LIFO slot of that task's runtime thread, where no other runtime thread may steal it.")
    p("client-go's program runs its goroutines on two OS threads, so the kernel seldom preempts")
    p("a goroutine that holds the queue's mutex. Two remedies were measured and dropped, since 41")
    p("interleaved rounds showed no difference beyond the spread: a parked thread woken per item")
    p("when a hold ends, and a task notification per 256 waiting items instead of one in all (the")
    p("first came back in another form in the sixth pass, below, on a queue whose adds end holds). More")
    p("shards (256 of one cache line each, from 32; commit 78646ad) made the long shard-lock")
    p("waits 47-62 % fewer, since a worker then seldom needs the shard a preempted producer holds;")
    p("the state's lock and a key's own shard still wait. The measurements then pointed to a")
    p("hand-off without lock waits. A build whose merged adds skipped the shard's lock (an array")
    p("of atomic hash markers: not exact, since a 64-bit hash stood in for the key, so not kept)")
    p("had, in 21 interleaved rounds, p99 800 / 865 us at 8 x 8 (`get_blocking` / `get`) against")
    p("1,237 / 1,475 for this queue and 887 / 789 for client-go, and 737 / 751 at 32 x 32 against")
    p("1,050 / 962 and 662 / 707. An exact form was then built and measured (session 30, not")
    p("kept): each item's state in one atomic word, found through papaya's hash map, whose reads")
    p("and writes take no lock, so that no add, get or done ever waited for another thread. In 15")
    p("interleaved rounds its p99 was no lower: 1,780 / 1,753 us at 8 x 8 against 1,503 / 1,695")
    p("for this queue and 1,114 / 1,156 for client-go, and 1,592 / 1,660 at 32 x 32 against")
    p("1,159 / 1,467 and 859 / 1,404. Drains with distinct keys took four times as long (0.231")
    p("against 0.058 s for `get_blocking` at 8 x 8, 5 rounds): every new item cost the map an")
    p("allocation and a deferred free. An exact merged add still writes the item's cache line (a")
    p("read-modify-write, so that the worker's pass comes after whatever the adding caller wrote),")
    p("which moves the line between the cores as the lock's word did; the marker build only read")
    p("it. Reading the word behind a sequentially consistent fence instead did not help either")
    p("(1,922 / 2,118 us at 8 x 8 and 1,401 / 1,104 at 32 x 32, against 1,480 / 1,785 and")
    p("1,125 / 1,597 for this queue and 1,761 / 1,164 and 1,183 / 814 for client-go in the same")
    p("15 rounds). Nor did merge windows of 250 and 100 us, or items queued again by `done` left")
    p("unheld (15 rounds each): the p99 moved within its spread, in both directions. What remains")
    p("of the tail is the kernel's scheduling of more runnable threads than cores. A build whose")
    p("first getter to meet a held head spun until the hold ended, instead of parking (session 31,")
    p("not kept: it keeps a core busy through every hold), showed how much of it the wake-up at a")
    p("hold's end is: in 21 interleaved rounds the p99 of `drain blocking 32 32 repeated` fell from")
    p("866 to 694 us (client-go 690), with user CPU 0.0086 s against 0.0048; at 8 x 8 it stayed at")
    p("1,006 against 1,032 (client-go 905), where the worst batch is often the first keys, which")
    p("no hold kept.")
    p()
    p("**Load and placement move these figures as much as most changes to the code did.** The same queue (since")
    p("then renamed by the async/blocking naming rule, and `get_blocking` checks on entry that it")
    p("may block) was measured at a median load of 8.2 (the run of commit f58ba16, in git history)")
    p("and here")
    p(f"(median load {med(loads):.1f}): `get_blocking` at 8 x 8 with distinct keys took 0.264 s against")
    p(f"client-go's 0.360 s there (0.73x), and {ratio_text(drain, 'blocking', 8, 'distinct')} here. Items")
    p("processed with repeated keys followed how far the workers lagged behind the producers:")
    p("at load 8.2 that queue's single worker processed 2,040 items of 400,000 adds at 1 x 1,")
    if drain[("kclient-before", "blocking", 1, "repeated")]:
        p(f"here the queue before the merge window {items_text(drain, 'kclient-before', 'blocking', 1)} "
          f"(client-go: {items_text(drain, 'client-go', 'goroutines', 1)}).")
    else:
        p(f"here {items_text(drain, 'kclient', 'blocking', 1)} with the merge window "
          f"(client-go: {items_text(drain, 'client-go', 'goroutines', 1)}).")
    p("A worker that keeps up with its producer leaves no item waiting for the next add of its key")
    p("to merge into; client-go's worker, slower per item, lags and merges more. Until the fifth")
    p("pass kclient's faster worker therefore merged less; the merge window now makes items wait")
    p("on purpose once keys come back.")
    p()
    p("**Fourth pass: fewer cache lines per item** (issue 21, commit b87a690; `kclient-before` in")
    p("the before-and-after table is the queue before it). `get_blocking` at 32 x 32 with distinct")
    p("keys had a bimodal drain time (0.085-0.244 s in the run before). `perf record` of a fast and a")
    p("slow run of the same binary showed the same code with ten times the samples in `hand_out` and")
    p("`enqueue`, on the loads and locked instructions of the state's lock, the FIFO and the item's")
    p("slot; the slow runs were the ones where a cross-core round trip took 400-550 ns instead of")
    p("about 100 (measured with a pinned C ping-pong before each run, 12 of 12 runs matched). So every")
    p("cache line an item moves between the cores counts. Per item the queue took the state's lock")
    p("three times (add, get, done) and wrote the FIFO's length beside it on a second line. Now `done`")
    p("takes no global lock (an atomic processing count that also carries the shutdown flag, so the")
    p("last `done` after shutdown learns from its own decrement that a drain waits; loom's five")
    p("models pass; the seventh pass replaced that count), the lock and the state fit one 64-byte")
    p("line, and the spinners' flag is written")
    p("only when the FIFO turns empty or non-empty. Sixteen interleaved pairs before the bench run:")
    p("32 x 32 distinct 0.127 s against 0.194 s (far placement 0.175 against 0.217, near 0.079")
    p("against 0.098); 8 x 8 and 1 x 1 distinct and async 8 x 8 within noise.")
    p()
    p("**Fifth pass: the merge window** (issue 21, commits 6ebe03a, ee01185 and 094d519; `kclient-before`")
    p("in the before-and-after table is the queue before them, commit 88e6c3c). With workers that")
    p("do nothing per item, kclient merged fewer repeated adds than client-go, because its workers")
    p("took each key before it came back. Now, once a key comes back (an add finds it waiting or")
    p("processing, or adds it again soon after `done`), each item queued waits the merge window")
    p("after it was queued (`QueueConfig::merge_window`, 500 us by default, rounded up to a whole")
    p("number of quarter windows so that items queued together go out together) before a worker takes it;")
    p("holding stops when the FIFO runs dry with no key back since it last did, so distinct keys")
    p("are never held. The timer thread ends a hold, and so does one merged add in 64 per shard:")
    p("on a busy machine the timer thread waited 70-850 us for a CPU, and a task it woke waited")
    p("for its runtime's injection queue. Trade-off: with repeated keys, p50 add-to-get is about")
    p("the window (600 us) instead of tens of microseconds, and the p99 rows above compare a queue")
    p("that waits on purpose with one that does not. A window of 250 us was measured too (5 rounds):")
    p("it merged less (producer tasks at 1 x 1 processed about 104,000 items against client-go's")
    p("21,000) without a lower p99. `Duration::ZERO` restores the old behaviour, and")
    p("`ControllerBuilder::merge_window` sets it for a controller's queue. The checks cost distinct")
    p("keys a little" + holding_cost_text(drain) + " (the first version")
    p("of the window, which read its flag from a line that workers write, was up to 40 % slower;")
    p("`workqueue/README.md`, Holding).")
    if any(k[0] == "kclient-before" for k in drain):
        cells = []
        for api, name in [("blocking", "`get_blocking`"), ("async", "`get`"), ("tasks", "`get`, producer tasks")]:
            for size in (1, 8):
                b = drain[("kclient-before", api, size, "repeated")]
                a = drain[("kclient", api, size, "repeated")]
                if a and b:
                    cells.append(
                        f"{name} {size} x {size}: {med(col(b, 'processed')):,.0f} before and "
                        f"{med(col(a, 'processed')):,.0f} after ({med(col(b, 'seconds')):.3f} s and "
                        f"{med(col(a, 'seconds')):.3f} s)"
                    )
        p("In this run, items processed with repeated keys (drain time in brackets): " + "; ".join(cells) + ".")
    p()
    p("**Sixth pass: more workers for a batch that leaves a hold** (issue 21, commit 5391780).")
    p("When a hold ends, every key the producers touched in a quarter window goes out at once, and")
    p("each of those items has waited the window already. The rule for a backlog, one woken thread")
    p("per 256 items, gave a batch of 1,000 keys four workers, which then competed for two cores")
    p("with 8 or 32 producer threads. Now items queued while the queue holds wake one thread per 16,")
    p("up to 16 at once (`HELD_WAKE_BATCH`, `HELD_WAKE_MAX` in `workqueue/src/core.rs`); items")
    p("queued while it does not hold keep the rule of 256, so distinct keys are not affected. In 41")
    p("interleaved rounds (session 32: `bench/workqueue/ab.py 41` on `drain blocking N N repeated")
    p("400000` of the harness built at the commit before and at the commit, and of client-go's)")
    p("the p99 of `drain blocking 8 8 repeated` was 671 us against 1,239 before")
    p("(client-go 784), and at 32 x 32 796 against 948 (client-go 658). Waking up to all 32 at")
    p("32 x 32 gave 767 against 819 with the cap (client-go 781) and brought the drain's system time")
    p("up to its user time, so the cap stays. The same rule for tasks (a notification per 16 items")
    p("instead of one in flight) moved nothing beyond the spread: 1,428 against 1,443 us at 8 x 8")
    p("and 1,027 against 1,085 at 32 x 32 (25 rounds). Those workers are tasks on two runtime")
    p("threads, and more notifications give them no more CPU.")
    p()
    p("Measured in the same session and not kept, each in 21-31 interleaved rounds:")
    p()
    p("- Holding an item queued again by `done` from the first add that found it processing,")
    p("  not from the `done`, to spare a worker preempted mid-item a second wait: the p99 did not")
    p("  move beyond the spread (`get_blocking` 1,301 against 1,137 us at 8 x 8, 1,098 against")
    p("  1,006 at 32 x 32).")
    p("- A producer thread calling `sched_yield` after it ends a hold, so that the workers it woke")
    p("  could run on its core: no change beyond the spread, at any size.")
    p("- A finer grid for the hold's end (a sixteenth of the window instead of a quarter): the p99")
    p("  with producer tasks at 32 x 32 fell from 695 to 613 us (client-go 711), but at 1 x 1 the")
    p("  producer tasks then processed 27,942 items against client-go's 27,876 and drained in")
    p("  0.0176 s against 0.0177: two targets met today would become coin flips.")
    p()
    p("**Seventh pass: no shared counter per item** (issue 21, commit 6a44879). Only a drain needs")
    p("to know how many items are processing, but every `get` and every `done` kept that number in")
    p("one atomic, a locked write to a cache line the other core had just written. Until shutdown")
    p("the queue now counts with plain writes to lines it holds anyway: gets in the FIFO's state,")
    p("dones in their item's shard; shutdown sums the shards once and counts in one atomic from")
    p("then on. In 15 interleaved rounds (session 33, `bench/workqueue/ab.py 15`, which now rotates")
    p("the order within each round and reports the median of the per-round time ratios) against")
    p("the build before: `drain async 8 8 distinct` 0.83x the time (faster in 13 of 15 rounds),")
    p("`blocking 32 32 distinct` 0.91x (11 of 15), `tasks 32 32 distinct` 0.93x (10 of 15),")
    p("`async 32 32 distinct` 1.00x; repeated keys did not move beyond the spread (21 rounds each")
    p("of `blocking 8 8` and `32 32`). Not kept, in the same session: counting the dones on a cache")
    p("line per thread (16 lines, still a locked add each) gained nothing in 31 rounds, where a")
    p("build with no count at all drained in 0.87x. Before the order rotated, three short runs")
    p("of that build with no count had shown gains of 4 to 24 %, and a longer one none: fixed-order")
    p("A/B runs of 11-15 rounds misled here, which is why ab.py now rotates and pairs.")
    p()
    p("**Eighth pass: hashbrown's tags back in use** (issue 21, session 33). The queue picked an")
    p("item's shard from the top 8 bits of its hash, and hashbrown takes a bucket's control tag,")
    p("which a probe compares before any key, from the top 7: every key of a shard had the same")
    p("tag, so every probe compared the key of every full bucket in its group. The shard now")
    p("comes from bits 49-56 (`SHARD_SHIFT` in `workqueue/src/core.rs`; a unit test checks that")
    p("the keys of one shard carry all 128 tags). In interleaved rounds against the build before")
    p("(`bench/workqueue/ab.py`, 400,000 distinct adds): `drain blocking 8 8` 0.93x the time")
    p("(faster in 19 of 21 rounds), `blocking 32 32` 0.92x (15 of 15), `blocking 2 2` 0.91x (21 of")
    p("31), `tasks 32 32` 0.91x (25 of 31), `async 8 8`, `async 32 32` and `tasks 1 1` 0.97-1.00x;")
    p("but `blocking 1 1` 1.22x (faster in 9 of 31; in a second run of 31 rounds, on a quieter")
    p("machine, 1.10x, faster in 14 of 31, with the same user CPU, 0.103 s), while with 50,000")
    p("adds it was 0.98x (18 of 31). A profile of that drain puts the extra time in the worker's")
    p("lookups (`hand_out`), on")
    p("the load of the entry itself. One guess, not confirmed: with one tag per shard, the")
    p("producer's probes loaded the entries of whole groups, which the worker then found in the")
    p("shared cache; the peak RSS, which follows the backlog, did not change.")
    p()
    p("**Ninth pass: a spin that does not yield** (issue 21, session 34, commit d24a19c). A")
    p("blocking getter that found the FIFO empty spun, then called `sched_yield` three times before")
    p("it parked. With more runnable threads than cores a yield hands the core to another thread")
    p("for a while, and every add in that while saw the spinner and woke nobody. The getter now")
    p("parks after its spin-hint rounds. In three runs of 21 interleaved rounds of `drain blocking")
    p("32 32 repeated 400000` against the build before, the drain's system time summed over the")
    p("rounds was 0.69, 0.50 and 0.70 of its user time, against 1.05, 0.88 and 0.75, at 0.96-1.07x")
    p("the time and with a p99 within the spread (the new build's p99 was the lower in 11, 10 and")
    p("15 of 21 rounds). The other blocking drains measured (distinct keys at every size, repeated at")
    p("1 x 1 and 2 x 2) kept their time, 0.97-1.01x; the p99 of `blocking 8 8")
    p("distinct` rose, 1,570 against 1,130 us and in a second run 2,474 against 2,218 (client-go's")
    p("is about 68,000). Before this change, a second 15-round record on the queue of the session")
    p("33 record met 50 targets and missed 4, where that record had met 48: `get_blocking 8 x 8")
    p("repeated` (on summed system time) and `get 32 x 32 distinct` (0.49x, against a ratio just")
    p("over 0.5 before rounding) were met in the second run and missed in the session-33 record,")
    p("which is the size of the spread between two runs.")
    p()
    p("**What the misses left are made of** (issue 21, session 35; builds for measuring only, not")
    p("committed). The p99 rows with producer *threads* and `get`: a build of commit 73996cd that")
    p("logged the queue's events (each under one global lock, which slows the run) was run 20 times")
    p("as `drain async 8 8 repeated 400000`. In 19 runs a task notification, sent by a producer")
    p("that ended a hold or by a task that took an item with more waiting, reached its task 1.0-4.4")
    p("ms later, and the run's p99 followed that wait (744 us in the run whose longest wait was")
    p("152 us; 1,175-4,551 us in the others). In the worst, a notification sent at 165 us reached")
    p("its task at 4,583 us, after the producers had finished (4,554 us). The queue had done its part:")
    p("the notification was out; the runtime thread that tokio unparked for it waited for a CPU. With")
    p("eight producer threads adding flat out, `perf sched timehist` of one such drain showed the")
    p("runtime threads and the timer thread waiting 0.66-1.47 ms between wake-up and running at six")
    p("of their wake-ups (kernel 6.18, whose EEVDF scheduler lets a running thread finish its slice")
    p("before a woken thread with a slice as long runs). Nor can")
    p("a second notification help: while one unparked worker is still searching, tokio wakes no")
    p("other (`Idle::notify_should_wakeup` in tokio 1.54), so a batch waits for the one thread the")
    p("kernel has not yet scheduled. client-go's program runs its goroutines on two OS threads, so no")
    p("producer stands between a woken goroutine and a core. As a check, a harness that gave its")
    p("runtime threads a 100 us slice (`sched_setattr`, which lets a waking thread preempt one with a")
    p("longer slice; the harness of commit 73996cd otherwise) had at 8 x 8 a median p99 of 884 us")
    p("(quartiles 715-1,005) against 1,465 (1,220-1,662) for the same binary without it, client-go")
    p("747 (715-992), in 21 interleaved rounds (`bench/workqueue/ab.py 21`); at 32 x 32, with four")
    p("times the producer threads, 858 against 880 us, client-go 683 (15 rounds). A library must")
    p("not change its caller's scheduling, so this stays a measurement (session 62 found what a")
    p("library may do instead: the threads that add give way, eleventh pass, after this section).")
    p("The idea left open in")
    p("session 34, a getter that meets a held head waiting with a timeout at the hold's end rather")
    p("than for the timer thread's or a producer's wake-up, did not help either: in 21 interleaved")
    p("rounds of `drain blocking 32 32 repeated 400000` its p99 was 803 us (quartiles 680-901)")
    p("against 729 (676-824) without, client-go 690 (625-790); at 8 x 8 682 against 650, client-go")
    p("1,134. A timed wake-up still leaves the woken thread waiting for a core. `get 32 x 32 distinct`")
    p("(time): the 32 producer threads filled the queue")
    p("in 68-125 ms with `get` workers, leaving 135,000-382,000 items for the two runtime threads to")
    p("serve afterwards (four runs), against 51-75 ms and at most 1,257 items left with `get_blocking`,")
    p("whose 32 worker threads get a share of the cores while the producers run. Serving a backlog")
    p("that size is bound by memory: in `perf record` of that drain, 35 % of all samples were in")
    p("`hand_out`, and 89 % of those on the two loads of its item's table lookup (control group and")
    p("bucket), which the producers wrote long before. Tried in session 37 and not kept: the getter")
    p("that pops the head also looked up, under its shard's lock, the item 2, 8 or 32 places behind")
    p("it, so that the getter of that item would find its entry in the cache. In `perf record` the")
    p("miss moved from the getter's own lookup to that warming one (53 % of `hand_out`'s samples on")
    p("it, 9 % on its own lookup), and in 11 interleaved rounds (`bench/workqueue/ab.py 11`, `drain")
    p("async 32 32 distinct 400000`, the same binary with and without) the drain took 1.06x, 0.99x")
    p("and 1.06x the time without: a load that misses still holds up the next locked instruction,")
    p("the next lock taken, so the misses do not overlap. A prefetch instruction would not wait, but")
    p("`_mm_prefetch` needs `unsafe` (rustc 1.95 requires it for a `#[target_feature]` function even")
    p("where SSE is always on), which the workspace forbids, and hashbrown does not expose a")
    p("bucket's address.")
    p("Tried in session 41, as an upper bound: a build whose getters skipped the lookup altogether")
    p("(`mark_processing` did nothing and `done` ignored the flags it would have set: wrong for")
    p("repeated keys, harmless for distinct ones). That is what a FIFO would save that knew a popped")
    p("item from a waiting one by its place in the order, so that a getter never touched the item's")
    p("entry (the slab-indexed design that earlier notes named as the lever left). In `perf record`")
    p("the miss moved to `done` (31 % of all samples, 53 % of those on the bucket's load): the")
    p("producers wrote the entry long before, and whichever call reads it first pays. In 15")
    p("interleaved rounds (`bench/workqueue/ab.py 15`, `drain async 32 32 distinct 400000`, the same")
    p("binary with and without the switch) the drain took 1.04x the time without it (faster in 4 of")
    p("15), p99 51,257 against 48,040 us. So that redesign would save a lock's round trip per item,")
    p("not the miss, and it would add a read of the count of pops, a line the getters write, to every")
    p("merged add: not started.")
    p("`get, producer tasks 1 x 1, worker computes")
    p("20 us` (items): the items processed come to about 1,000 plus one per 20 us that the producer")
    p("takes for its adds, since the worker is busy throughout. The producer task took 33-40 ms for")
    p("its 400,000 adds (six runs; 2,310-2,504 items), against 8-10 ms for a producer thread with")
    p("`get_blocking` (six runs; 1,016-1,411 items): it gives its runtime thread back every 128 adds,")
    p("and shares that thread with the worker for part of the run (the lockstep described above).")
    p("A `get` that spent one extra unit of the task's budget per microsecond since the task's")
    p("previous `get`, so that a worker that computes yields after about 128 us rather than 128")
    p("items, cut the producer task's time to 11-30 ms and the items to 1,318-1,922 in 12 runs (a")
    p("unit per 4 us: 1,393-2,292), against 1,524-3,425 in 12 runs without (one after the other,")
    p("not interleaved): still above client-go's 1,211, and even a producer task alone on its")
    p("thread would pay for 3,125 yields. Not kept: it costs every `get` two clock readings.")
    p("Session 36 counted that lockstep inside the runs, with a harness that noted, for each item,")
    p("the runtime thread its worker ran on and the one its producer ran on last: in six runs the")
    p("worker took 257-1,795 items on the producer's thread while the producer was still adding,")
    p("each time a whole multiple of 128 plus one: whole budgets of the worker, run while the")
    p("producer waited in that thread's deferred wake-ups (the lockstep described under \"Merging")
    p("when the workers work\"; tokio issue 4941 asks for a LIFO slot other threads may steal")
    p("from). A `get` that,")
    p("woken by an add on its own thread (each task notification noted the address of a")
    p("thread-local of the thread that sent it), yielded once before looking cut the items of this")
    p("row to a median of 1,544 against 3,693 (client-go 1,258; 11 interleaved rounds,")
    p("`bench/workqueue/ab.py 11`), but raised those of `tasks 2 x 2 repeated, worker computes 20 us` to")
    p("37,925 against 17,801 (client-go 21,812) and the p99 of `tasks 32 x 32 repeated` to 829")
    p("against 705 us: it moves which task tokio runs where, not the cause. Not kept. Nor could")
    p("the worker move itself: a `get` that, woken on its adder's thread while that adder kept")
    p("adding, woke itself during its own poll (tokio then puts it at the back of the thread's run")
    p("queue, where another thread may steal it, and notifies an idle runtime thread) until it ran")
    p("on another thread, for at most 0.2, 1 or 3 ms, got there in 2 of 6, 5 of 8 and 2 of 5 of the")
    p("runs where it tried: the idle runtime thread seldom came to steal it in time.")
    p()
    p("**The records after the eleventh pass** (issue 21, session 62). The record below was run")
    p("on commit b50e722, whose queue is that of the eleventh pass (threads that add give way to a")
    p("woken getter still waiting for a core, described after this section) with its later")
    p("changes; `kclient-before` is the queue of the session 61 record (9799090). It meets 53 of")
    p("the 54 targets. Two earlier records in the same session, on the pass as first committed")
    p("(8cfd0c1) and on commit 30b2e6f, met 52 and 50; each of the three records before the pass")
    p("met 48 or 49. Met in all three records after the pass and missed in every record before it:")
    p("the p99 of `get 8 x 8 repeated` (here 694 against 1,227 us, lower in 15 of 15 rounds; the")
    p("queue before 1,140). The p99 of `get 32 x 32 repeated` is met here (710 against 823 us, lower")
    p("in 10 of 15; the queue before 1,740) and at 30b2e6f (693 against 819), and was missed at")
    p("8cfd0c1 (714 against 705, lower in 7 of 15): with the wake-up no longer waiting for a core,")
    p("the p99 of the repeated-key rows is the queue's own merge window (500 us, each hold ending on")
    p("the next quarter window) plus the time the woken getters take to serve a batch of 1,000")
    p("keys, and client-go's p99 at 32 x 32 (705-823 us in the three records) lies close to it. A")
    p("shorter window would lower it and merge less; with `KCLIENT_WQ_MERGE_WINDOW_US` (a switch of")
    p("the harness) at 400 us, 15 interleaved rounds gave `async 32 32 repeated` a p99 of 617 us")
    p("against client-go's 744 (lower in 14 of 15), but `tasks 1 1 repeated` then processed 29,548")
    p("items against client-go's 33,974 and drained in 0.97x its time, where the default window")
    p("gave 26,010 items and 0.94x in the same rounds. Missed here and in every record: the items")
    p("of `get, producer tasks 1 x 1 repeated, worker computes 20 us` (tokio's LIFO slot, after this")
    p("section). Missed at 30b2e6f and met here, all at 1 x 1 and within the spread between")
    p("records: the time of `get, producer tasks 1 x 1 repeated` (1.07x client-go's there, 0.96x")
    p("here; in 21 interleaved rounds after that record, `ab.py 21`, 0.87x against 0.83x for the")
    p("queue before), and the items of `get_blocking` and `get 1 x 1 repeated, worker computes 20")
    p("us` (1,225 and 1,224 against 1,178 there; 1,212 and 1,210 against 1,231 here; the session 61")
    p("record missed them with 1,225 and 1,216 against 1,200). Those two are a tie by construction:")
    p("the items are the 1,000 keys of the last pass plus what the worker takes while the producer")
    p("still adds. kclient's producer is not the slower one: in six runs each of builds that printed")
    p("when the producers had finished (session 36), the producer thread took 4.1-10.6 ms and")
    p("client-go's producer goroutine 9.8-21.1 ms; client-go's worker took fewer items while its")
    p("producer added.")
    p()
    p("**Targets** of issue 21 (medians of this run). The fourth column counts the rounds in which")
    p("kclient's p99 was the lower of the two, each round's pair run one after the other: it tells")
    p("a steady difference from the spread, which the medians alone hide. The fifth compares the")
    p("drain's system and user CPU summed over the rounds: the kernel here splits CPU time between")
    p("the two by sampling at each 4 ms tick (CONFIG_TICK_CPU_ACCOUNTING, 250 Hz), and kclient's drains")
    p("with repeated keys spend 5-20 ms of CPU, so one run's split rests on a few samples and the")
    p("medians of its halves flip from one run of the benchmark to the next. (Sessions up to 32")
    p("compared the medians; in the record of session 33 no row's verdict differs between the two.)")
    p()
    p("| target | kclient / client-go time | p99 kclient vs client-go | rounds with kclient's p99 lower | sys <= user (the drain's CPU, summed over the rounds) | |")
    p("|---|--:|--:|--:|--|--|")
    for line in targets(drain, busy):
        p(line)


if __name__ == "__main__":
    main()

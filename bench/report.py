#!/usr/bin/env python3
"""Turns bench/run's results (one JSON object per line) into bench/RESULTS.md on stdout."""

import argparse
import datetime
import json
import os
import platform
import statistics


def machine():
    cpu = "unknown CPU"
    try:
        with open("/proc/cpuinfo") as f:
            for line in f:
                if line.startswith("model name"):
                    cpu = line.split(":", 1)[1].strip()
                    break
        with open("/proc/meminfo") as f:
            mem_kb = int(f.readline().split()[1])
    except OSError:
        mem_kb = 0
    return f"{cpu}, {os.cpu_count()} cores, {mem_kb / 1048576:.0f} GiB RAM, {platform.system()} {platform.release()}"


def fixture(path):
    """JSON bytes per Pod as the server sends them, with and without managedFields."""
    with open(path) as f:
        items = json.load(f)["items"]
    full = stripped = 0
    for pod in items:
        full += len(json.dumps(pod, separators=(",", ":")))
        pod["metadata"].pop("managedFields", None)
        stripped += len(json.dumps(pod, separators=(",", ":")))
    return len(items), full / len(items), stripped / len(items)


def spread(values, fmt):
    """Median, with min-max when runs differ."""
    med = statistics.median(values)
    if len(values) > 1 and min(values) != max(values):
        return f"{fmt.format(med)} ({fmt.format(min(values))}-{fmt.format(max(values))})"
    return fmt.format(med)


def synced(runs):
    """The runs that synced (bench/run stops a program at its time limit)."""
    return [r for r in runs if not r.get("did_not_sync")]


def sync_cell(runs):
    """Sync seconds, median (range) of the runs that synced, and how many did not."""
    done = synced(runs)
    cell = spread([r["sync_seconds"] for r in done], "{:.2f}") if done else ""
    missed = len(runs) - len(done)
    if missed:
        limit = max(r.get("timeout_seconds", 0) for r in runs)
        note = f"did not sync in {limit:.0f} s ({missed} of {len(runs)} runs)"
        cell = f"{cell}; {note}" if cell else note
    return cell


def resources(runs):
    """CPU seconds (user + sys) and peak RSS in MiB of the process, median (range), over
    every run, including those stopped at the time limit."""
    if not all("cpu_user" in r for r in runs):
        return "-", "-"
    cpu = [r["cpu_user"] + r["cpu_sys"] for r in runs]
    rss = [r["max_rss_kb"] / 1024 for r in runs]
    return spread(cpu, "{:.2f}"), spread(rss, "{:.0f}")


def ratio(ours, theirs):
    """ours / theirs, or "-" when either is missing."""
    if ours is None or theirs is None:
        return "-"
    return f"{ours / theirs:.2f}"


def informer_runs(rows, modes, expected, what):
    """{(client, mode): [runs]} of the informer rows of these modes; a run that synced must
    have cached the expected number of objects."""
    informers = {}
    for r in rows:
        if r["mode"] in modes:
            if not r.get("did_not_sync") and r["objects"] != expected:
                raise SystemExit(f"{r['client']} cached {r['objects']} {what}, expected {expected}")
            informers.setdefault((r["client"], r["mode"]), []).append(r)
    return informers


def median_of(runs, field, scale=1):
    done = synced(runs)
    return statistics.median(r[field] / scale for r in done) if done else None


def ours_for(informers, mode):
    """The kclient row other rows are compared with: protobuf when it was measured."""
    for client in ("kclient (protobuf)", "kclient"):
        if (client, mode) in informers:
            return (client, mode)
    raise SystemExit(f"no kclient row for {mode}")


def size_section(rows, n, fixture_stats, several):
    """The informer and decode tables of one fixture size, and the chart's points for it:
    {client: (sync seconds, peak RSS MiB)} of the full-object informer rows that synced."""
    _, json_full, json_stripped = fixture_stats
    informers = informer_runs(rows, ("informer", "informer-transform", "informer-metadata"), n, "Pods")

    def per_object(key):
        return median_of(informers[key], "live_bytes", n)

    def sync(key):
        return median_of(informers[key], "sync_seconds")

    out = []
    title = f" ({n:,} Pods)" if several else ""
    out.append(f"## Informer heap per cached Pod, and time to sync{title}\n")
    out.append("| client | managedFields | bytes/Pod | x JSON | kclient / this | sync s, median (range) | kclient sync / this | CPU s | peak RSS MiB |")
    out.append("|---|---|--:|--:|--:|--:|--:|--:|--:|")
    order = [
        ("kclient (protobuf)", "informer"),
        ("kclient", "informer"),
        ("kube-rs", "informer"),
        ("kube-rs (streaming list)", "informer"),
        ("client-go", "informer"),
        ("client-go (JSON)", "informer"),
        ("kclient (protobuf)", "informer-transform"),
        ("kclient", "informer-transform"),
        ("kube-rs", "informer-transform"),
        ("client-go", "informer-transform"),
        ("kclient (protobuf)", "informer-metadata"),
        ("kclient", "informer-metadata"),
        ("kube-rs", "informer-metadata"),
        ("client-go", "informer-metadata"),
    ]
    for key in order:
        if key not in informers:
            continue
        client, mode = key
        ours = ours_for(informers, mode)
        bytes_ = per_object(key)
        dropped = mode == "informer-transform"
        mf = {
            "informer": "kept",
            "informer-transform": "dropped by a transform",
            "informer-metadata": "metadata-only informer (kept)",
        }[mode]
        if bytes_ is None:
            per, x = "-", "-"
        else:
            per = f"{bytes_:,.0f}"
            x = f"{bytes_ / json_full:.2f}" + (f" ({bytes_ / json_stripped:.2f} of JSON w/o mF)" if dropped else "")
        cpu, rss = resources(informers[key])
        out.append(
            f"| {client} | {mf} | {per} | {x} | {ratio(per_object(ours), bytes_)} "
            f"| {sync_cell(informers[key])} | {ratio(sync(ours), sync(key))} | {cpu} | {rss} |"
        )
    out.append("")
    mf_json = json_full - json_stripped
    costs = [
        f"{client} {per_object((client, 'informer')) - per_object((client, 'informer-transform')):,.0f}"
        for client in ("kclient (protobuf)", "kclient", "kube-rs", "client-go")
        if (client, "informer") in informers and (client, "informer-transform") in informers
        and per_object((client, "informer")) is not None
        and per_object((client, "informer-transform")) is not None
    ]
    if costs:
        out.append(f"Heap that managedFields cost per Pod (kept minus dropped; {mf_json:,.0f} bytes of JSON):")
        out.append(", ".join(costs) + ".\n")

    decodes = {}
    for r in rows:
        if r["mode"] == "decode":
            decodes.setdefault((r["client"], r["decoder"]), []).append(r)
    if decodes:
        def rate(key):
            return statistics.median(r["bytes_per_second"] for r in decodes[key])

        def wire(key):
            return decodes[key][0].get("wire", "json")

        def wire_bytes(key):
            r = decodes[key][0]
            return r.get("wire_bytes", r.get("json_bytes"))

        ours_json = ("kclient", "kclient-api (decode_json)")
        ours_pb = ("kclient", "kclient-api (protobuf)")
        json_bytes = wire_bytes(ours_json)
        out.append(f"## Decoding the LIST ({n:,} Pods: {json_bytes:,} bytes of JSON"
                   + (f", {wire_bytes(ours_pb):,} of protobuf" if ours_pb in decodes else "") + ")\n")
        out.append("Median over the rounds (each round runs every decoder's process once, in turn; each")
        out.append("process times several decodes and reports their median) of the whole response decoded")
        out.append("into the client's list type; heap is what one decoded list holds (Go: after")
        out.append("`runtime.GC()`); allocations are those of one decode (Go: `MemStats.Mallocs`, which")
        out.append("includes temporaries since freed). \"kclient / this\" compares with kclient's decoder")
        out.append("of the same wire format.\n")
        out.append("| decoder | wire | MB/s, median (range) | heap bytes/Pod | x JSON | allocations/Pod | kclient speed / this | kclient heap / this |")
        out.append("|---|---|--:|--:|--:|--:|--:|--:|")
        for key, rs in decodes.items():
            ours = ours_pb if wire(key) == "protobuf" and ours_pb in decodes else ours_json
            per = statistics.median(r["live_bytes"] for r in rs) / n
            ours_per = statistics.median(r["live_bytes"] for r in decodes[ours]) / n
            allocs = [r.get("allocations") for r in rs]
            out.append(
                f"| {key[0]}: {key[1]} | {wire(key)} "
                f"| {spread([r['bytes_per_second'] / 1e6 for r in rs], '{:.0f}')} | {per:,.0f} "
                f"| {per / json_full:.2f} "
                f"| {'-' if None in allocs else format(statistics.median(allocs) / n, '.0f')} "
                f"| {rate(ours) / rate(key):.2f} "
                f"| {ours_per / per:.2f} |"
            )
        if ours_pb in decodes:
            out.append("")
            out.append(f"kclient's protobuf decode / its JSON decode, in bytes of the same Pods per second "
                       f"of decoding: {(json_bytes / rate(ours_json)) / (wire_bytes(ours_pb) / rate(ours_pb)):.2f}x "
                       f"(time to decode the list: {wire_bytes(ours_pb) / rate(ours_pb) * 1e3:.1f} ms from protobuf, "
                       f"{json_bytes / rate(ours_json) * 1e3:.1f} ms from JSON).")
        out.append("")
    points = {}
    for (client, mode), rs in informers.items():
        done = synced(rs)
        if mode == "informer" and done and all("max_rss_kb" in r for r in done):
            points[client] = (
                statistics.median(r["sync_seconds"] for r in done),
                statistics.median(r["max_rss_kb"] / 1024 for r in done),
            )
    uniform = {client: per_object((client, mode)) for (client, mode) in informers if mode == "informer"}
    return "\n".join(out), points, uniform


def mixed_section(rows, stats, uniform, uniform_n):
    """The table of the mixed-kinds fixture, with each client's heap per Pod of the uniform
    fixture beside its heap per object here."""
    count, json_full, json_stripped = stats
    informers = informer_runs(rows, ("informer-mixed",), count, "objects")
    out = [f"## Mixed kinds: heap per cached object, and time to sync ({count:,} objects)\n"]
    out.append("ConfigMaps, Secrets, Services, Deployments and Pods in one namespace (`bench/go/mixed.go`),")
    out.append("one informer per kind from one factory (kube-rs: one reflector per kind), all started")
    out.append("together; synced when every one has. Every object has its own labels, annotations and")
    out.append("optional fields: label keys and images come from small pools, as on a cluster, but")
    out.append("checksums, release names, config data and (on a third of the objects) kubectl's")
    out.append("last-applied-configuration are unique, so interning shares far less than with the")
    out.append(f"uniform Pods. JSON per object as served: {json_full:,.0f} bytes ({json_stripped:,.0f} without")
    out.append("managedFields, which has one entry here).\n")
    out.append(f"| client | bytes/object | x JSON | kclient / this | uniform Pods ({uniform_n:,}): bytes/Pod | sync s, median (range) | kclient sync / this | CPU s | peak RSS MiB |")
    out.append("|---|--:|--:|--:|--:|--:|--:|--:|--:|")
    order = ["kclient (protobuf)", "kclient", "kube-rs", "client-go", "client-go (JSON)"]
    ours = ours_for(informers, "informer-mixed")
    for client in order:
        key = (client, "informer-mixed")
        if key not in informers:
            continue
        bytes_ = median_of(informers[key], "live_bytes", count)
        per = "-" if bytes_ is None else f"{bytes_:,.0f}"
        x = "-" if bytes_ is None else f"{bytes_ / json_full:.2f}"
        pod = uniform.get(client)
        cpu, rss = resources(informers[key])
        out.append(
            f"| {client} | {per} | {x} | {ratio(median_of(informers[ours], 'live_bytes', count), bytes_)} "
            f"| {'-' if pod is None else format(pod, ',.0f')} | {sync_cell(informers[key])} "
            f"| {ratio(median_of(informers[ours], 'sync_seconds'), median_of(informers[key], 'sync_seconds'))} "
            f"| {cpu} | {rss} |"
        )
    out.append("")
    return "\n".join(out)


def chart(summary):
    """An SVG of two panels, sync seconds and peak RSS MiB against Pods, a line per client."""
    sizes = sorted(summary)
    clients = sorted({c for points in summary.values() for c in points})
    colours = ["#1b6ac9", "#d1495b", "#2e933c", "#edae49", "#6d597a", "#00798c", "#8c564b", "#444444"]
    width, height, pad = 420, 300, 50
    panels = []
    for p, (title, index) in enumerate((("sync time, s", 0), ("peak RSS, MiB", 1))):
        top = max((summary[n][c][index] for n in sizes for c in summary[n]), default=1) * 1.1
        x0 = p * (width + 20)

        def x(n):
            if len(sizes) == 1:
                return x0 + pad + (width - 2 * pad) / 2
            return x0 + pad + (width - 2 * pad) * (n - sizes[0]) / (sizes[-1] - sizes[0])

        def y(v):
            return height - pad - (height - 2 * pad) * v / top

        parts = [
            f'<text x="{x0 + width / 2}" y="20" text-anchor="middle" font-size="14">{title}</text>',
            f'<line x1="{x0 + pad}" y1="{height - pad}" x2="{x0 + width - pad}" y2="{height - pad}" stroke="black"/>',
            f'<line x1="{x0 + pad}" y1="{pad}" x2="{x0 + pad}" y2="{height - pad}" stroke="black"/>',
        ]
        for k in range(5):
            v = top * k / 4
            parts.append(f'<text x="{x0 + pad - 5}" y="{y(v) + 4:.1f}" text-anchor="end" font-size="10">{v:.3g}</text>')
        for n in sizes:
            parts.append(f'<text x="{x(n):.1f}" y="{height - pad + 15}" text-anchor="middle" font-size="10">{n:,}</text>')
        parts.append(f'<text x="{x0 + width / 2}" y="{height - 12}" text-anchor="middle" font-size="11">Pods</text>')
        for i, c in enumerate(clients):
            colour = colours[i % len(colours)]
            pts = [(x(n), y(summary[n][c][index])) for n in sizes if c in summary[n]]
            if len(pts) > 1:
                path = " ".join(f"{a:.1f},{b:.1f}" for a, b in pts)
                parts.append(f'<polyline points="{path}" fill="none" stroke="{colour}" stroke-width="2"/>')
            for a, b in pts:
                parts.append(f'<circle cx="{a:.1f}" cy="{b:.1f}" r="3" fill="{colour}"/>')
        panels.extend(parts)
    legend = []
    for i, c in enumerate(clients):
        colour = colours[i % len(colours)]
        lx = 20 + (i % 4) * 210
        ly = height + 15 + (i // 4) * 18
        legend.append(f'<rect x="{lx}" y="{ly - 9}" width="12" height="4" fill="{colour}"/>')
        legend.append(f'<text x="{lx + 18}" y="{ly - 4}" font-size="11">{c}</text>')
    total_h = height + 25 + ((len(clients) + 3) // 4) * 18
    body = "\n".join(panels + legend)
    return (f'<svg xmlns="http://www.w3.org/2000/svg" width="{2 * width + 20}" height="{total_h}" '
            f'font-family="sans-serif">\n<rect width="100%" height="100%" fill="white"/>\n{body}\n</svg>\n')


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--results", required=True)
    ap.add_argument("--list", required=True, action="append",
                    help="PODS=PATH of a size's LIST as JSON (repeat for each size), or one PATH")
    ap.add_argument("--mixed", help="OBJECTS=PATH of the mixed-kinds fixture's objects as JSON")
    ap.add_argument("--chart", help="write an SVG chart of sync time and peak RSS against the number of Pods here")
    ap.add_argument("--command", required=True)
    ap.add_argument("--versions", required=True)
    ap.add_argument("--source", required=True)
    args = ap.parse_args()

    with open(args.results) as f:
        all_rows = [json.loads(line) for line in f if line.strip()]
    lists = {}
    for item in args.list:
        pods, sep, path = item.partition("=")
        if sep:
            lists[int(pods)] = path
        else:
            lists[None] = pods
    if None in lists:
        # One size, given as a bare path: its rows may predate the "pods" field.
        n = fixture(lists[None])[0]
        lists = {n: lists.pop(None)}
        for r in all_rows:
            r.setdefault("pods", n)
    sizes = sorted(lists)
    sections = []
    summary = {}
    uniform = {}
    for n in sizes:
        rows = [r for r in all_rows if r.get("pods") == n and r["mode"] != "informer-mixed"]
        text, points, per_pod = size_section(rows, n, fixture(lists[n]), len(sizes) > 1)
        sections.append(text)
        summary[n] = points
        if n == sizes[0]:
            uniform = per_pod
    if args.mixed:
        count, _, path = args.mixed.partition("=")
        stats = fixture(path)
        rows = [r for r in all_rows if r["mode"] == "informer-mixed" and r.get("pods") == int(count)]
        sections.append(mixed_section(rows, stats, uniform, sizes[0]))
    n, json_full, json_stripped = fixture(lists[sizes[0]])
    if args.chart:
        with open(args.chart, "w") as f:
            f.write(chart(summary))
    now = datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%d %H:%M UTC")
    out = []
    out.append("# Side-by-side benchmarks: kclient, client-go, kube-rs\n")
    out.append(f"Produced by `{args.command}` (from the repository root) on {now}.\n")
    out.append(f"- Machine: {machine()}. The 2 cores are shared with other builds and tests, so")
    out.append("  times vary between runs (ranges below are min-max over the runs); heap bytes do not.")
    out.append(f"- kclient: {args.source}. Peers: {args.versions}.")
    counts = " and ".join(f"{size:,}" for size in sizes)
    out.append(f"- Fixture: {counts} Pods in one namespace (2 containers, env, probes, resources, 4 volumes,")
    out.append("  6 labels, 5 annotations, an owner; written by three field managers: a server-side")
    out.append("  apply, a strategic-merge label update and a status apply, so managedFields has 3")
    out.append(f"  entries). JSON per Pod as served: {json_full:,.0f} bytes ({json_stripped:,.0f} without")
    out.append("  managedFields).")
    out.append("- Heap: Rust sides count live bytes with the same global allocator")
    out.append("  (`bench/common/alloc.rs`); the Go side reads `runtime.MemStats.HeapAlloc` after")
    out.append("  `runtime.GC()`. Both: after sync and 0.5 s of watch, minus before start.")
    out.append("- Sync: from start to the informer reporting synced (LIST or streaming watch-list,")
    out.append("  decode, store). kclient and client-go use a streaming watch-list (client-go's")
    out.append("  `WatchListClient`, on by default); kube-rs lists in pages of 500 unless")
    out.append("  `streaming_lists()` is set (the \"streaming list\" row).")
    out.append("- Wire format: client-go's typed clients ask for protobuf for built-in types by default")
    out.append("  (since v0.35), and so does kclient built with its `protobuf` features: the")
    out.append("  \"client-go\" and \"kclient (protobuf)\" rows get protobuf from the server, which")
    out.append("  encodes it far faster than JSON. The \"kclient\" and \"client-go (JSON)\" rows force")
    out.append("  JSON; kube-rs speaks only JSON. Transform rows are protobuf for kclient and client-go.")
    out.append("- CPU and peak RSS: of the whole process (GNU time's user + sys and maximum resident")
    out.append("  set size), start to exit, so they include connecting and the 0.5 s of watch.")
    out.append("- Time limit: bench/run stops an informer that has not synced within its limit")
    out.append("  (`KCLIENT_BENCH_TIMEOUT`); its row says so, and its CPU and peak RSS are those used")
    out.append("  until it was stopped. Heap and ratios count only the runs that synced.")
    out.append("- \"kclient / this\" columns compare with the kclient row of the same mode, protobuf")
    out.append("  when it was measured.")
    out.append("- Metadata-only rows: kclient's `SharedInformerFactory::metadata_informer`, client-go's")
    out.append("  `metadatainformer`, kube-rs's watcher over `Api<PartialObjectMeta<Pod>>`; the server")
    out.append("  sends `PartialObjectMetadata` (protobuf to kclient and client-go, JSON to kube-rs;")
    out.append("  managedFields kept).\n")

    if args.chart:
        out.append(f"![Sync time and peak RSS against the number of Pods]({os.path.basename(args.chart)})\n")
        out.append(f"`{os.path.basename(args.chart)}`: sync time (left) and peak RSS (right), median per size, for each client's")
        out.append("full-object informer.\n")
    out.extend(sections)
    out.append("Raw results of this run: one JSON object per program run, in `bench/target/results.jsonl`")
    out.append("(not committed).")
    print("\n".join(out))


if __name__ == "__main__":
    main()

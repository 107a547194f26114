#!/usr/bin/env python3
"""Runs the stream benchmark's contenders, interleaved, and writes RESULTS.md.

Called by ./run once the programs are built and the pod runs; see README.md.
Usage: drive.py OUT_MD NAMESPACE POD MIB ROUNDS CONNECTIONS SOURCE KEXEC KPORT_FORWARD

Per round, in turn for kclient's examples and kubectl:
  exec:         `cat blob` (MIB MiB made in the pod beforehand) to /dev/null, timed start to exit;
  port-forward: one connection through the forwarder reading MIB MiB that a server on the
                node (this script, pod port P = 127.0.0.1:P) sends, timed connect to last byte;
  concurrent:   CONNECTIONS connections at once through one forwarder, 1 MiB each, counted.
CPU seconds (user + sys) and peak RSS of the client process come from GNU time.
"""

import hashlib
import os
import signal
import socket
import statistics
import subprocess
import sys
import threading
import time


def log(msg):
    print(f"bench/streams: {msg}", file=sys.stderr, flush=True)


CHUNK = bytes((i * 7) % 251 for i in range(1 << 20))


def source_server():
    """A TCP server on the node: each connection first sends 8 decimal digits, the number of
    MiB it wants, and gets that many MiB back, then the server closes it."""
    listener = socket.socket()
    listener.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    listener.bind(("127.0.0.1", 0))
    listener.listen(512)

    def serve(conn):
        with conn:
            want = b""
            while len(want) < 8:
                got = conn.recv(8 - len(want))
                if not got:
                    return
                want += got
            view = memoryview(CHUNK)
            for _ in range(int(want)):
                conn.sendall(view)

    def accept():
        while True:
            conn, _ = listener.accept()
            threading.Thread(target=serve, args=(conn,), daemon=True).start()

    threading.Thread(target=accept, daemon=True).start()
    return listener.getsockname()[1]


def fetch(port, mib):
    """Asks the source for `mib` MiB through the forwarded `port`; returns (bytes, seconds)."""
    start = time.perf_counter()
    with socket.create_connection(("127.0.0.1", port), timeout=120) as conn:
        conn.sendall(b"%08d" % mib)
        want = mib << 20
        buf = bytearray(1 << 20)
        got = 0
        while got < want:
            n = conn.recv_into(buf)
            if n == 0:
                break
            got += n
    return got, time.perf_counter() - start


def timed(argv):
    return ["/usr/bin/time", "-f", "TIME %e %U %S %M", *argv]


def parse_time(stderr):
    lines = [l for l in stderr.splitlines() if l.startswith("TIME ")]
    if not lines:
        raise SystemExit(f"no /usr/bin/time line in: {stderr[-2000:]}")
    wall, user, system, rss = lines[-1].split()[1:5]
    return float(wall), float(user) + float(system), int(rss) / 1024


def exec_round(argv, mib):
    proc = subprocess.run(timed(argv), stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    if proc.returncode != 0:
        raise SystemExit(f"{argv} exited {proc.returncode}: {proc.stderr[-2000:]}")
    wall, cpu, rss = parse_time(proc.stderr)
    return {"mibps": mib / wall, "seconds": wall, "cpu": cpu, "rss": rss}


def start_forwarder(argv, remote):
    # Its own process group: SIGINT to the group stops the forwarder (GNU time ignores it).
    proc = subprocess.Popen(timed(argv), stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                            start_new_session=True)
    line = proc.stdout.readline()
    prefix = "Forwarding from 127.0.0.1:"
    if not line.startswith(prefix):
        proc.kill()
        raise SystemExit(f"{argv}: unexpected first line {line!r}: {proc.stderr.read()[-2000:]}")
    local = int(line[len(prefix):].split(" ")[0])
    threading.Thread(target=lambda: [None for _ in proc.stdout], daemon=True).start()
    return proc, local


def stop_forwarder(proc):
    os.killpg(proc.pid, signal.SIGINT)
    _, stderr = proc.communicate(timeout=60)
    return parse_time(stderr)


def forward_round(argv, remote, mib):
    proc, local = start_forwarder(argv, remote)
    got, seconds = fetch(local, mib)
    _, cpu, rss = stop_forwarder(proc)
    if got != mib << 20:
        raise SystemExit(f"{argv}: {got} bytes of {mib << 20}")
    return {"mibps": mib / seconds, "seconds": seconds, "cpu": cpu, "rss": rss}


def concurrent_round(argv, remote, connections):
    proc, local = start_forwarder(argv, remote)
    results = [None] * connections

    def one(i):
        try:
            got, _ = fetch(local, 1)
            results[i] = got == 1 << 20
        except OSError as e:
            results[i] = False
            log(f"connection {i}: {e}")

    start = time.perf_counter()
    threads = [threading.Thread(target=one, args=(i,)) for i in range(connections)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    seconds = time.perf_counter() - start
    _, cpu, rss = stop_forwarder(proc)
    return {"failures": results.count(False), "seconds": seconds, "cpu": cpu, "rss": rss}


def summary(values, fmt="{:.2f}"):
    return f"{fmt.format(statistics.median(values))} ({fmt.format(min(values))}-{fmt.format(max(values))})"


def main():
    out_md, ns, pod, mib, rounds, connections, source, kexec, kpf = sys.argv[1:10]
    mib, rounds, connections = int(mib), int(rounds), int(connections)
    port = source_server()
    remote = f":{port}"
    contenders = {
        "kclient (kexec, kport-forward)": {
            "exec": [kexec, "-n", ns, pod, "--", "cat", "blob"],
            "forward": [kpf, "-n", ns, f"pod/{pod}", remote],
        },
        "kubectl": {
            "exec": ["kubectl", "-n", ns, "exec", pod, "--", "cat", "blob"],
            "forward": ["kubectl", "-n", ns, "port-forward", f"pod/{pod}", remote],
        },
    }
    # Not timed: both copies of the file are the file (SHA-256), and a warm-up.
    expected = subprocess.run(["kubectl", "-n", ns, "exec", pod, "--", "sha256sum", "blob"],
                              check=True, capture_output=True, text=True).stdout.split()[0]
    for name, c in contenders.items():
        digest = hashlib.sha256(subprocess.run(c["exec"], check=True, capture_output=True).stdout).hexdigest()
        if digest != expected:
            raise SystemExit(f"{name}: exec output's SHA-256 {digest} is not the file's {expected}")
    log(f"both copies of the {mib} MiB file match its SHA-256")
    rows = {name: {"exec": [], "forward": [], "concurrent": []} for name in contenders}
    for r in range(rounds):
        order = list(contenders.items())
        if r % 2:
            order.reverse()
        for name, c in order:
            rows[name]["exec"].append(exec_round(c["exec"], mib))
            rows[name]["forward"].append(forward_round(c["forward"], remote, mib))
            rows[name]["concurrent"].append(concurrent_round(c["forward"], remote, connections))
            log(f"round {r + 1}/{rounds} {name}: exec {rows[name]['exec'][-1]['mibps']:.0f} MiB/s, "
                f"port-forward {rows[name]['forward'][-1]['mibps']:.0f} MiB/s, "
                f"{connections} connections: {rows[name]['concurrent'][-1]['failures']} failed")

    base = rows["kubectl"]
    lines = [
        "# Stream throughput: kclient's kexec and kport-forward against kubectl",
        "",
        f"Produced by `bench/streams/run {mib} {rounds} {connections}` (from the repository root) on "
        f"{time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime())}.",
        "",
        f"- kclient: {source}; release builds of the `kexec` and `kport-forward` examples.",
        f"- kubectl: {subprocess.run(['kubectl', 'version', '--client'], capture_output=True, text=True).stdout.splitlines()[0]}.",
        "- Cluster: the local testenv (kube-apiserver, simulated kubelet serving exec and port-forward",
        "  with the kubelet's own streaming handlers), all on loopback; the 2 cores are shared with",
        "  the apiserver, the kubelet and this driver (and other work on the machine), so absolute",
        "  figures are low and vary; compare the two rows of a table.",
        f"- Rounds: {rounds}, interleaved (the order alternates each round); median (min-max).",
        f"- exec: `cat` of a {mib} MiB file of random bytes in the pod, stdout to /dev/null, timed from",
        "  process start to exit (so connecting is included); MiB/s is the file over that time.",
        f"- port-forward: one TCP connection through the forwarder to a server on the node that sends",
        f"  {mib} MiB, timed from connect to the last byte.",
        f"- concurrent: {connections} connections at once through one forwarder, 1 MiB each.",
        "- CPU s (user + sys) and peak RSS: the client process, from GNU time, start to exit.",
        "",
        "| test | client | MiB/s | x kubectl | seconds | CPU s | CPU x kubectl | peak RSS MiB |",
        "|---|---|--:|--:|--:|--:|--:|--:|",
    ]
    for test in ("exec", "forward"):
        for name in contenders:
            runs = rows[name][test]
            mibps = [x["mibps"] for x in runs]
            cpu = [x["cpu"] for x in runs]
            ratio = statistics.median(mibps) / statistics.median([x["mibps"] for x in base[test]])
            cpu_ratio = statistics.median(cpu) / statistics.median([x["cpu"] for x in base[test]])
            lines.append(
                f"| {'exec' if test == 'exec' else 'port-forward'} | {name} | {summary(mibps, '{:.0f}')} | "
                f"{ratio:.2f} | {summary([x['seconds'] for x in runs])} | {summary(cpu)} | {cpu_ratio:.2f} | "
                f"{summary([x['rss'] for x in runs], '{:.0f}')} |")
    lines += [
        "",
        f"| {connections} concurrent connections | client | failed (all rounds) | seconds | CPU s | peak RSS MiB |",
        "|---|---|--:|--:|--:|--:|",
    ]
    for name in contenders:
        runs = rows[name]["concurrent"]
        lines.append(
            f"| port-forward | {name} | {sum(x['failures'] for x in runs)} of {connections * len(runs)} | "
            f"{summary([x['seconds'] for x in runs])} | {summary([x['cpu'] for x in runs])} | "
            f"{summary([x['rss'] for x in runs], '{:.0f}')} |")
    with open(out_md, "w") as f:
        f.write("\n".join(lines) + "\n")


if __name__ == "__main__":
    main()

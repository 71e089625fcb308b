#!/usr/bin/env python3
"""Workers under kills: N runs x 10 stub steps across W `hensuc worker` processes on one
PostgreSQL, one worker SIGKILLed (and restarted) every K seconds (docs/performance.md, *Durable-run figures*).

    scripts/pg-test.sh python3 scripts/bench-workers.py HENSUC [--runs 1000] [--workers 2 4]
                                                              [--kill-every 3] [--queue-first]

Prints per worker count: wall time, runs/s, steps/s, p50/p99 queue->start (a run's creation to
its first claim), takeover time after a kill (the kill to the `taken_over` event of each run the
killed worker held), lost runs (not completed), duplicated steps (a node recorded twice in a
run's log) and the PostgreSQL server's CPU per step (every `postgres` process of the machine,
while the workers ran). Needs HENSU_TEST_DATABASE_URL (set by scripts/pg-test.sh).
"""
import argparse, datetime, json, os, random, signal, subprocess, sys, tempfile, time, uuid

NODES = 10


def workflow():
    s = 'fun w() = workflow("ten") {\n    agents {\n        agent("a") { role = "W"; model = Models.GPT_4O }\n    }\n    graph {\n        start at "n0"\n'
    for i in range(NODES):
        nxt = "done" if i + 1 == NODES else f"n{i + 1}"
        s += f'        node("n{i}") {{\n            agent = "a"\n            prompt = "step {i}"\n            onSuccess goto "{nxt}"\n        }}\n'
    return s + '        end("done")\n    }\n}\n'


def ms(rfc):
    return datetime.datetime.fromisoformat(rfc.replace("Z", "+00:00")).timestamp() * 1000


def pct(xs, p):
    xs = sorted(xs)
    return xs[min(len(xs) - 1, int(len(xs) * p / 100))] if xs else float("nan")


def bench(hensuc, base_url, runs, workers, kill_every, queue_first=False):
    schema = "b_" + uuid.uuid4().hex[:12]
    sep = "&" if "?" in base_url else "?"
    url = f"{base_url}{sep}options=-c%20search_path%3D{schema}"
    subprocess.run(["psql", base_url, "-qc", f"CREATE SCHEMA {schema}"], check=True)
    d = tempfile.mkdtemp()
    open(os.path.join(d, "w.hwf"), "w").write(workflow())
    env = dict(os.environ, HENSU_DATABASE_URL=url, HENSU_STUB_DELAY_MS="5")
    # The schema first (one queued run), then the workers, then the rest of the queue: the
    # queue->start figure is the latency a run sees with workers up.
    enqueue = lambda: subprocess.run(
        [hensuc, "run", "--stub", "--detach", "-d", d, os.path.join(d, "w.hwf")],
        env=env, check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    enqueue()
    procs, files, kills = {}, [], []

    def start(i):
        f = os.path.join(d, f"w{i}-{len(files)}.jsonl")
        files.append(f)
        procs[i] = subprocess.Popen(
            [hensuc, "worker", "--store", url, "-d", d, "--concurrency", "4", "--lease-ttl", "3s",
             "--heartbeat", "500ms", "--poll", "100ms", "--events", f],
            env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)

    queued_rate = None
    if queue_first:
        # The whole queue first (its rate printed; one process, `--contexts`), then the
        # workers: the throughput of the workers alone.
        contexts = os.path.join(d, "contexts.jsonl")
        with open(contexts, "w") as f:
            f.write("{}\n" * (runs - 1))
        q0 = time.time()
        subprocess.run(
            [hensuc, "run", "--stub", "--detach", "--contexts", contexts, "-d", d,
             os.path.join(d, "w.hwf")],
            env=env, check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        queued_rate = (runs - 1) / (time.time() - q0)
    pg_cpu0 = postgres_cpu_seconds()
    t0 = time.time()
    for i in range(workers):
        start(i)
    last_kill = time.time()
    for _ in range(0 if queue_first else runs - 1):
        enqueue()
        if time.time() - last_kill >= kill_every:
            i = random.randrange(workers)
            procs[i].send_signal(signal.SIGKILL)
            procs[i].wait()
            kills.append(time.time() * 1000)
            start(i)
            last_kill = time.time()
    while True:
        listed = json.loads(subprocess.run([hensuc, "runs", "--json", "-d", d], env=env,
                                           capture_output=True, check=True).stdout)["runs"]
        if all(r["status"] not in ("queued", "running", "paused") for r in listed):
            break
        if time.time() - last_kill >= kill_every:
            i = random.randrange(workers)
            procs[i].send_signal(signal.SIGKILL)
            procs[i].wait()
            kills.append(time.time() * 1000)
            start(i)
            last_kill = time.time()
        time.sleep(0.2)
    wall = time.time() - t0
    pg_cpu = postgres_cpu_seconds() - pg_cpu0
    for p in procs.values():
        p.send_signal(signal.SIGKILL)
        p.wait()
    events = [json.loads(l) for f in files if os.path.exists(f) for l in open(f) if l.strip()]
    first_claim = {}
    for e in events:
        if e["event"] == "claimed":
            first_claim.setdefault(e["run_id"], e["at_ms"])
            first_claim[e["run_id"]] = min(first_claim[e["run_id"]], e["at_ms"])
    waits = [first_claim[r["run_id"]] - ms(r["started"]) for r in listed if r["run_id"] in first_claim]
    takeovers = []
    for e in events:
        if e["event"] == "taken_over":
            before = [k for k in kills if k <= e["at_ms"]]
            if before:
                takeovers.append(e["at_ms"] - before[-1])
    lost = sum(1 for r in listed if r["status"] != "completed")
    dup = 0
    for r in listed:
        out = subprocess.run([hensuc, "attach", r["run_id"], "--json", "-d", d], env=env,
                             capture_output=True, check=False).stdout.decode()
        nodes = [json.loads(l)["executed_node"] for l in out.splitlines() if l.strip()]
        nodes = [n for n in nodes if n]
        dup += len(nodes) - len(set(nodes))
    # wall includes queueing (one `hensuc run --detach` process per run).
    print(f"workers={workers} runs={runs} wall={wall:.1f}s runs/s={runs / wall:.1f} "
          f"steps/s={runs * NODES / wall:.0f} queue->start p50={pct(waits, 50) / 1000:.2f}s "
          f"p99={pct(waits, 99) / 1000:.2f}s kills={len(kills)} takeover p50="
          f"{pct(takeovers, 50) / 1000:.2f}s max={max(takeovers or [float('nan')]) / 1000:.2f}s "
          f"lost={lost} duplicated_steps={dup}"
          + (f" queued_first={queued_rate:.1f} runs/s" if queued_rate else "")
          + (f" postgres_cpu_per_step={pg_cpu / (runs * NODES) * 1e6:.0f}us" if pg_cpu >= 0 else ""),
          flush=True)


def postgres_cpu_seconds():
    """User + system CPU of every `postgres` process on this machine (the throw-away cluster's
    server and backends), or -1 when /proc cannot tell. The workers' own listing and attach
    queries count too: read it as an upper bound of the runs' share."""
    total, tick = 0, os.sysconf("SC_CLK_TCK")
    try:
        for pid in os.listdir("/proc"):
            if not pid.isdigit():
                continue
            try:
                with open(f"/proc/{pid}/stat") as f:
                    stat = f.read()
            except OSError:
                continue
            comm = stat[stat.index("(") + 1:stat.rindex(")")]
            if comm.startswith("postgres"):
                fields = stat[stat.rindex(")") + 2:].split()
                total += int(fields[11]) + int(fields[12])
    except OSError:
        return -1
    return total / tick


def main():
    a = argparse.ArgumentParser()
    a.add_argument("hensuc")
    a.add_argument("--runs", type=int, default=1000)
    a.add_argument("--workers", type=int, nargs="+", default=[2, 4])
    a.add_argument("--kill-every", type=float, default=3.0)
    a.add_argument("--queue-first", action="store_true",
                   help="queue every run before the workers start (their throughput alone)")
    o = a.parse_args()
    base = os.environ.get("HENSU_TEST_DATABASE_URL") or sys.exit("run under scripts/pg-test.sh")
    for w in o.workers:
        bench(o.hensuc, base, o.runs, w, o.kill_every, o.queue_first)


if __name__ == "__main__":
    main()

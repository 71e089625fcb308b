#!/usr/bin/env python3
"""hensu vs LangGraph on the same workloads, measured in one run (bench/peers/README.md).

Run through run.sh, which installs the pinned LangGraph into a virtualenv. The hensu side runs the
given `hensuc` binary as a whole process on generated `.hwf` files (start-up and compile
included); the LangGraph side runs in this interpreter (imports done once, before timing).

Workloads:
  chain N (1,000 and 10,000 nodes), in memory: `hensuc run --stub --no-store` vs `invoke()` of a
      compiled StateGraph without a checkpointer;
  chain N, durable: `hensuc run --stub` (SQLite store `.hensu/state.db`) vs `invoke()` with
      `SqliteSaver` on a file;
  chain N, durable on PostgreSQL (with --pg-url URL): `hensuc run --stub` with
      HENSU_DATABASE_URL=URL vs `invoke()` with `PostgresSaver` on the same database (each run
      in a schema of its own);
  loop N (10,000 iterations): one node revised N - 1 times (`onCondition { otherwise revise
      "write" retry N-1 }`) vs one node with a conditional edge back to itself, counting to N;
      in memory, durable on SQLite, and on PostgreSQL with --pg-url;
  fan-out: one parallel node with 1,000 branches vs 1,000 nodes started from START and joined;
  build/validate a 2,000-node chain: `hensuc check` vs `StateGraph(...)` + `compile()`.
Every durable LangGraph figure is measured twice: with LangGraph's default durability ("async":
a step's checkpoint is written while the next step runs) and with durability="sync" (the
checkpoint is written before the next step starts, which is what a hensu run promises).
Every hensu node is a stub agent writing the context key `out` (the LangGraph node returns
{"out": ...}), so both do one trivial step per node. Each figure is the median of --reps runs.
"""
import argparse
import operator
import os
import platform
import sqlite3
import statistics
import subprocess
import sys
import tempfile
import time
from typing import Annotated, TypedDict

# --- hensu side -----------------------------------------------------------------------------


def chain_hwf(n):
    lines = [
        'fun chain() = workflow("chain") {',
        "    agents {",
        '        agent("a") { role = "W"; model = "stub" }',
        "    }",
        "    config {",
        "        maxSteps = %d" % (n + 10),
        "    }",
        "    graph {",
        '        start at "n0"',
    ]
    for i in range(n):
        nxt = '"n%d"' % (i + 1) if i + 1 < n else '"done"'
        lines += [
            '        node("n%d") {' % i,
            '            agent = "a"',
            '            prompt = "step %d"' % i,
            '            writes("out")',
            "            onSuccess goto %s" % nxt,
            "        }",
        ]
    lines += ['        end("done")', "    }", "}"]
    return "\n".join(lines) + "\n"


def loop_hwf(n):
    """One node revised N - 1 times: N steps of the same node (a review or rubric loop's shape)."""
    return """fun loop() = workflow("loop") {
    state {
        variable("status", VarType.STRING, "anything")
    }
    agents {
        agent("a") { role = "W"; model = "stub" }
    }
    config {
        maxSteps = %d
    }
    graph {
        start at "write"
        node("write") {
            agent = "a"
            prompt = "again"
            writes("status")
            onCondition("status") {
                otherwise revise "write" retry %d otherwise "done"
            }
        }
        end("done")
    }
}
""" % (n + 10, n - 1)


def fanout_hwf(branches):
    lines = [
        'fun fan() = workflow("fan") {',
        "    agents {",
        '        agent("a") { role = "W"; model = "stub" }',
        "    }",
        "    graph {",
        '        start at "fan"',
        '        parallel("fan") {',
    ]
    for b in range(branches):
        lines += [
            '            branch("b%d") {' % b,
            '                agent = "a"',
            '                prompt = "branch %d"' % b,
            "            }",
        ]
    lines += ['            onSuccess goto "done"', "        }", '        end("done")', "    }", "}"]
    return "\n".join(lines) + "\n"


def timed_process(argv, expect=0):
    t0 = time.perf_counter()
    done = subprocess.run(argv, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    elapsed = time.perf_counter() - t0
    if done.returncode != expect:
        sys.exit("%s exited %d: %s" % (" ".join(argv), done.returncode, done.stderr.decode()[-2000:]))
    return elapsed


# --- LangGraph side -------------------------------------------------------------------------


class ChainState(TypedDict):
    out: str


class LoopState(TypedDict):
    status: str
    n: int


class FanState(TypedDict):
    results: Annotated[list, operator.add]


def chain_graph(n):
    from langgraph.graph import END, START, StateGraph

    g = StateGraph(ChainState)
    for i in range(n):
        g.add_node("n%d" % i, lambda state, i=i: {"out": "step %d" % i})
    g.add_edge(START, "n0")
    for i in range(n - 1):
        g.add_edge("n%d" % i, "n%d" % (i + 1))
    g.add_edge("n%d" % (n - 1), END)
    return g


def loop_graph(n):
    from langgraph.graph import END, START, StateGraph

    g = StateGraph(LoopState)
    g.add_node("write", lambda state: {"status": "success", "n": state["n"] + 1})
    g.add_edge(START, "write")
    g.add_conditional_edges("write", lambda state: "write" if state["n"] < n else END)
    return g


def fanout_graph(branches):
    from langgraph.graph import END, START, StateGraph

    g = StateGraph(FanState)
    names = ["b%d" % b for b in range(branches)]
    for b, name in enumerate(names):
        g.add_node(name, lambda state, b=b: {"results": ["branch %d" % b]})
        g.add_edge(START, name)
    g.add_node("join", lambda state: {})
    g.add_edge(names, "join")
    g.add_edge("join", END)
    return g


def langgraph_run(graph, steps, first, durable, work, durability=None):
    """`invoke()` of `graph` from the state `first`; durable: with `SqliteSaver` on a file,
    with `durability` ("sync" / "async"; None: LangGraph's default)."""
    config = {"recursion_limit": steps + 10}
    if not durable:
        app = graph.compile()
        t0 = time.perf_counter()
        app.invoke(first, config)
        return time.perf_counter() - t0
    from langgraph.checkpoint.sqlite import SqliteSaver

    path = os.path.join(work, "lg-%d-%d.sqlite" % (steps, time.monotonic_ns()))
    conn = sqlite3.connect(path, check_same_thread=False)
    try:
        app = graph.compile(checkpointer=SqliteSaver(conn))
        config["configurable"] = {"thread_id": "bench"}
        t0 = time.perf_counter()
        app.invoke(first, config, durability=durability)
        return time.perf_counter() - t0
    finally:
        conn.close()


def langgraph_chain(n, durable, work, durability=None):
    return langgraph_run(chain_graph(n), n, {"out": ""}, durable, work, durability)


def langgraph_loop(n, durable, work, durability=None):
    return langgraph_run(loop_graph(n), n, {"status": "", "n": 0}, durable, work, durability)


def pg_schema(url):
    """A fresh schema on `url`, and `url` with it as the search path (hensu's and psycopg's
    `options`)."""
    import uuid

    schema = "peers_" + uuid.uuid4().hex[:12]
    subprocess.run(["psql", url, "-qc", "CREATE SCHEMA %s" % schema], check=True)
    sep = "&" if "?" in url else "?"
    return "%s%soptions=-c%%20search_path%%3D%s" % (url, sep, schema)


def langgraph_pg(graph, steps, first, url, durability=None):
    from langgraph.checkpoint.postgres import PostgresSaver

    config = {"recursion_limit": steps + 10, "configurable": {"thread_id": "bench"}}
    with PostgresSaver.from_conn_string(pg_schema(url)) as saver:
        saver.setup()
        app = graph.compile(checkpointer=saver)
        t0 = time.perf_counter()
        app.invoke(first, config, durability=durability)
        return time.perf_counter() - t0


def hensu_run_pg(hensuc, path, work, url):
    env = dict(os.environ, HENSU_DATABASE_URL=pg_schema(url))
    t0 = time.perf_counter()
    p = subprocess.run([hensuc, "run", path, "--stub", "--quiet", "-d", work], env=env,
                       stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    if p.returncode != 0:
        sys.exit("hensuc run on PostgreSQL failed: %s" % p.stderr)
    return time.perf_counter() - t0


def langgraph_fanout(branches):
    app = fanout_graph(branches).compile()
    t0 = time.perf_counter()
    result = app.invoke({"results": []})
    elapsed = time.perf_counter() - t0
    assert len(result["results"]) == branches
    return elapsed


def langgraph_build(n):
    t0 = time.perf_counter()
    chain_graph(n).compile()
    return time.perf_counter() - t0


# --- driver ---------------------------------------------------------------------------------


def median(fn, reps):
    return statistics.median(fn() for _ in range(reps))


def ms(seconds):
    return "%.1f ms" % (seconds * 1e3) if seconds < 10 else "%.2f s" % seconds


def us(seconds):
    return "%.1f µs" % (seconds * 1e6)


def load_average():
    try:
        return "%.1f / %.1f / %.1f" % os.getloadavg()
    except OSError:
        return "unknown"


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--hensuc", required=True)
    ap.add_argument("--reps", type=int, default=3, help="runs per figure (median); default 3")
    ap.add_argument("--sizes", default="1000,10000", help="chain lengths; default 1000,10000")
    ap.add_argument("--durable-reps", type=int, default=1, help="runs per durable figure; default 1")
    ap.add_argument("--branches", type=int, default=1000)
    ap.add_argument("--build-nodes", type=int, default=2000)
    ap.add_argument("--pg-url", help="also the durable chains on this PostgreSQL database "
                    "(needs langgraph-checkpoint-postgres and psql)")
    ap.add_argument("--loops", default="10000", help="loop iterations (one node revised); default 10000")
    ap.add_argument("--commit", choices=["pipelined", "each-step"],
                    help="hensu's `[store] commit` for the durable runs (default: hensu's default)")
    args = ap.parse_args()
    sizes = [int(s) for s in args.sizes.split(",") if s]
    loops = [int(s) for s in args.loops.split(",") if s]
    hensuc = os.path.abspath(args.hensuc)

    import langgraph
    from importlib.metadata import version

    print("date      %s" % time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime()))
    print("machine   %s, %d CPUs, %s" % (platform.machine(), os.cpu_count() or 0, platform.platform()))
    print("load      %s (1/5/15 min, at start)" % load_average())
    print("hensuc    %s (%s)" % (hensuc, subprocess.run([hensuc, "--version"], capture_output=True, text=True).stdout.strip()))
    print("commit    %s" % (args.commit or "hensu's default"))
    print("langgraph %s, langgraph-checkpoint-sqlite %s, Python %s" % (
        version("langgraph"), version("langgraph-checkpoint-sqlite"), platform.python_version()))
    del langgraph
    print()

    rows = []
    with tempfile.TemporaryDirectory(prefix="hensu-peers-") as work:
        if args.commit:
            with open(os.path.join(work, "hensu.toml"), "w") as f:
                f.write('[store]\ncommit = "%s"\n' % args.commit)
        startup = median(lambda: timed_process([hensuc, "--version"]), max(args.reps, 5))
        rows.append(("hensuc --version (start-up floor)", startup, None, None, None))
        for n in sizes:
            path = os.path.join(work, "chain%d.hwf" % n)
            with open(path, "w") as f:
                f.write(chain_hwf(n))
            for durable in (False, True):
                reps = args.durable_reps if durable else args.reps
                # --quiet: the per-step progress line is not what is measured.
                argv = [hensuc, "run", path, "--stub", "--quiet", "-d", work]
                if not durable:
                    argv.append("--no-store")
                h = median(lambda: timed_process(argv), reps)
                lg = median(lambda: langgraph_chain(n, durable, work), reps)
                lg_sync = median(lambda: langgraph_chain(n, True, work, "sync"), reps) if durable else None
                rows.append(("chain %d, %s" % (n, "durable (SQLite)" if durable else "in memory"), h, lg, n, lg_sync))
            if args.pg_url:
                h = median(lambda: hensu_run_pg(hensuc, path, work, args.pg_url), args.durable_reps)
                lg = median(lambda: langgraph_pg(chain_graph(n), n, {"out": ""}, args.pg_url), args.durable_reps)
                lg_sync = median(lambda: langgraph_pg(chain_graph(n), n, {"out": ""}, args.pg_url, "sync"),
                                 args.durable_reps)
                rows.append(("chain %d, durable (PostgreSQL)" % n, h, lg, n, lg_sync))
        for n in loops:
            path = os.path.join(work, "loop%d.hwf" % n)
            with open(path, "w") as f:
                f.write(loop_hwf(n))
            for durable in (False, True):
                reps = args.durable_reps if durable else args.reps
                argv = [hensuc, "run", path, "--stub", "--quiet", "-d", work]
                if not durable:
                    argv.append("--no-store")
                h = median(lambda: timed_process(argv), reps)
                lg = median(lambda: langgraph_loop(n, durable, work), reps)
                lg_sync = median(lambda: langgraph_loop(n, True, work, "sync"), reps) if durable else None
                rows.append(("loop %d, %s" % (n, "durable (SQLite)" if durable else "in memory"), h, lg, n, lg_sync))
            if args.pg_url:
                h = median(lambda: hensu_run_pg(hensuc, path, work, args.pg_url), args.durable_reps)
                lg = median(lambda: langgraph_pg(loop_graph(n), n, {"status": "", "n": 0}, args.pg_url),
                            args.durable_reps)
                lg_sync = median(lambda: langgraph_pg(loop_graph(n), n, {"status": "", "n": 0}, args.pg_url,
                                                      "sync"), args.durable_reps)
                rows.append(("loop %d, durable (PostgreSQL)" % n, h, lg, n, lg_sync))
        path = os.path.join(work, "fan.hwf")
        with open(path, "w") as f:
            f.write(fanout_hwf(args.branches))
        h = median(lambda: timed_process([hensuc, "run", path, "--stub", "--quiet", "--no-store", "-d", work]), args.reps)
        lg = median(lambda: langgraph_fanout(args.branches), args.reps)
        rows.append(("parallel fan-out, %d branches" % args.branches, h, lg, args.branches, None))
        path = os.path.join(work, "build%d.hwf" % args.build_nodes)
        with open(path, "w") as f:
            f.write(chain_hwf(args.build_nodes))
        h = median(lambda: timed_process([hensuc, "check", path, "-d", work]), args.reps)
        lg = median(lambda: langgraph_build(args.build_nodes), args.reps)
        rows.append(("build + validate %d nodes (check / compile())" % args.build_nodes, h, lg, None, None))

    print("%-46s %12s %12s %12s %12s %9s %12s %9s" % (
        "workload", "hensu", "per step", "LangGraph", "per step", "LG/hensu", "LG sync", "sync/hensu"))
    for name, h, lg, per, lg_sync in rows:
        if lg is None:
            print("%-46s %12s" % (name, ms(h)))
            continue
        sync = ("%12s %8.1f×" % (ms(lg_sync), lg_sync / h)) if lg_sync is not None else ""
        print("%-46s %12s %12s %12s %12s %8.1f× %s" % (
            name, ms(h), us(h / per) if per else "", ms(lg), us(lg / per) if per else "", lg / h, sync))
    print()
    print("hensu: whole process (start-up, parse, check, run; durable: the store too).")
    print("LangGraph: invoke() only for runs (graph built and compiled before timing); durable rows")
    print("with its default durability (\"async\") and, under LG sync, with durability=\"sync\"; for")
    print("build + validate, StateGraph construction + compile(). Python start-up and imports excluded.")
    print("load      %s (1/5/15 min, at end)" % load_average())


if __name__ == "__main__":
    main()

#!/usr/bin/env python3
"""The figures a person waits on, measured from outside, beside their goals and the last recorded.

Usage: bench_goals.py LEMBAS_BIN [--runs 5] [--record] [--skip-long]

Runs the scripted task (`outside/peer_bench.py`: read -> edit -> command -> answer, a model that
answers at once) and the 1,000-step session (`outside/scale/long_session.py`: five prompts of 199
steps, then resumes), prints one row per figure — now, last recorded (`bench-last.json`), goal —
and exits 1 when any figure misses its goal, so a change that slows a step is seen the day it
lands. `--record` writes today's figures as the last recorded.
"""
import argparse, json, os, subprocess, sys

HERE = os.path.dirname(os.path.abspath(__file__))
LAST = os.path.join(HERE, "bench-last.json")

# (figure, goal, how it is read: "max" = at most the goal)
GOALS = [
    ("first request, ms (process start -> request headers)", "first_request_ms", 5.0),
    ("harness per step, ms (reply written -> next request, median)", "step_ms", 1.5),
    ("peak memory, MB (scripted task)", "max_rss_mb", 11.0),
    ("1,000 steps: peak memory, MB", "long_peak_mb", 20.0),
    ("1,000 steps: read step, last fifth / first fifth", "long_read_growth", 1.25),
    ("1,000 steps: resumed to first request, ms", "resume_ms", 10.0),
]


def scripted(binary, runs):
    out = subprocess.run([sys.executable, os.path.join(HERE, "outside", "peer_bench.py"), "lembas:" + binary, str(runs)],
                         capture_output=True, text=True, check=True)
    med = json.loads(out.stdout)["median"]
    return {k: med.get(k) for k in ("first_request_ms", "step_ms", "max_rss_mb")}


def long_session(binary):
    out = subprocess.run([sys.executable, os.path.join(HERE, "outside", "scale", "long_session.py"), binary,
                          "--prompts", "5", "--per", "199", "--pairs", "3", "--checkpoints", "5",
                          # The scale server reports prompt tokens lembas cannot believe (100 + n),
                          # so lembas counts by bytes and would compact a 32k window near step
                          # 240, where the scripted calls make an empty summary: the 1,000 steps
                          # are measured whole, as the figures were.
                          "--context", "10000000"],
                         capture_output=True, text=True, check=True)
    data = json.loads(out.stdout.strip().splitlines()[-1])
    prompts = data["prompts"]
    first, last = prompts[0]["gap_read_first_fifth_ms"], prompts[-1]["gap_read_last_fifth_ms"]
    return {
        "long_peak_mb": max(p["rss_mb"] for p in prompts),
        "long_read_growth": last / first if first and last else None,
        "resume_ms": data["checkpoints"][-1]["resume_first_req_ms_med"] if data["checkpoints"] else None,
    }


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("bin")
    ap.add_argument("--runs", type=int, default=5)
    ap.add_argument("--record", action="store_true")
    ap.add_argument("--skip-long", action="store_true")
    a = ap.parse_args()
    binary = os.path.abspath(a.bin)
    now = scripted(binary, a.runs)
    if not a.skip_long:
        now.update(long_session(binary))
    last = json.load(open(LAST)) if os.path.exists(LAST) else {}
    missed = 0
    print("%-62s %9s %9s %7s" % ("figure", "now", "last", "goal"))
    for label, key, goal in GOALS:
        if key not in now:
            continue
        value = now[key]
        met = value is not None and value <= goal
        missed += not met
        shown = lambda v: "-" if v is None else "%.2f" % v
        print("%-62s %9s %9s %7s  %s" % (label, shown(value), shown(last.get(key)), "%.2f" % goal,
                                           "met" if met else "MISSED"))
    if a.record:
        json.dump({k: round(v, 3) for k, v in now.items() if v is not None}, open(LAST, "w"), indent=1)
        print("recorded in", os.path.relpath(LAST))
    sys.exit(1 if missed else 0)


if __name__ == "__main__":
    main()

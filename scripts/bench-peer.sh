#!/usr/bin/env bash
# Measures decide beside GoRules ZEN on the same small decision, in one run, and prints one
# table: measure, ours, ZEN, ratio (ours / ZEN; below 1 means decide is faster or smaller).
#
#   scripts/bench-peer.sh ZEN_BENCH_DIR
#
# ZEN_BENCH_DIR is the peer benchmark: a cargo project with the binaries `zen-bench` (in-process
# timings) and `zen-one` (load the graph file, evaluate one profile, print JSON) and the graph
# `decisions/gpu_procurement.json`. Our side is benches/zen-peer/ (the same decision as a rules
# folder) and benches/peer.rs.
#
# Steps: build both in release (the builds run under `nice`); run `zen-bench N` and
# `cargo bench --bench peer`; then the one-shot runs, RUNS of each after 3 warm-ups,
# alternating ZEN and decide so the machine's drift hits both alike:
#   ZEN:    zen-one decisions/gpu_procurement.json                       (in ZEN_BENCH_DIR)
#   decide: decide --rules benches/zen-peer/rules benches/zen-peer/pretrain-70b.json --format json
# Wall time is measured around spawn-and-wait (so it includes spawning, measured alone on
# /bin/true); max RSS comes from RUNS more runs of each under `/usr/bin/time -f %M` (not from
# this script's own wait4: Linux carries the forking Python's high-water mark into the child).
#
# Environment: RUNS (one-shot runs each, default 20), N (profiles per zen-bench pass, default
# 100000, the peer's), OUT (where the raw outputs go, default target/bench-peer).
# Needs cargo, python3 and /usr/bin/time. Not run by CI: the numbers are for docs/performance.md.
set -euo pipefail

if [ $# -ne 1 ] || [ ! -f "$1/Cargo.toml" ]; then
    echo "usage: scripts/bench-peer.sh ZEN_BENCH_DIR   (the peer benchmark's cargo project)" >&2
    exit 2
fi
zen="$(cd "$1" && pwd)"
root="$(cd "$(dirname "$0")/.." && pwd)"
runs="${RUNS:-20}"
n="${N:-100000}"
out="${OUT:-$root/target/bench-peer}"
mkdir -p "$out"
for tool in cargo python3 /usr/bin/time; do
    command -v "$tool" >/dev/null || { echo "bench-peer: $tool is needed" >&2; exit 2; }
done

# The peer's binaries go to its own target/ whatever CARGO_TARGET_DIR says, ours to ours.
zen_target="$zen/target"
our_target="${CARGO_TARGET_DIR:-$root/target}"
case "$our_target" in /*) ;; *) our_target="$root/$our_target" ;; esac

echo "== build (release)" >&2
(cd "$zen" && nice -n 10 cargo build --release --locked --target-dir "$zen_target")
(cd "$root" && nice -n 10 cargo build --release --bin decide &&
    nice -n 10 cargo bench --bench peer --no-run)

{
    echo "date: $(date -u +%FT%TZ)"
    uname -srm
    rustc --version
    echo "cores: $(nproc)"
    echo "load average at start: $(cut -d' ' -f1-3 /proc/loadavg)"
    echo "decide: $(git -C "$root" rev-parse --short HEAD 2>/dev/null || echo '?')"
} >"$out/machine.txt"

echo "== ZEN in-process: zen-bench $n" >&2
(cd "$zen" && "$zen_target/release/zen-bench" "$n") | tee "$out/zen-bench.txt" >&2

echo "== decide in-process: cargo bench --bench peer" >&2
(cd "$root" && cargo bench --bench peer) | tee "$out/peer-bench.txt" >&2

echo "== one-shot runs: $runs of each" >&2
ZEN_DIR="$zen" ROOT="$root" RUNS="$runs" OUT="$out" \
    ZEN_ONE="$zen_target/release/zen-one" DECIDE="$our_target/release/decide" python3 - <<'PY'
import json, os, statistics, subprocess, sys, time

runs, out = int(os.environ["RUNS"]), os.environ["OUT"]
zen = ([os.environ["ZEN_ONE"], "decisions/gpu_procurement.json"], os.environ["ZEN_DIR"])
ours = ([os.environ["DECIDE"], "--rules", "benches/zen-peer/rules",
         "benches/zen-peer/pretrain-70b.json", "--format", "json"], os.environ["ROOT"])
true = (["/bin/true"], os.environ["ROOT"])
WARMUP = 3

def once(cmd):
    t0 = time.perf_counter()
    r = subprocess.run(cmd[0], cwd=cmd[1], stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    ms = (time.perf_counter() - t0) * 1000.0
    if r.returncode != 0:
        sys.exit(f"bench-peer: {' '.join(cmd[0])} failed ({r.returncode}): {r.stderr.decode()}")
    return ms, r.stdout.decode()

def rss_kib(cmd):
    r = subprocess.run(["/usr/bin/time", "-f", "%M"] + cmd[0], cwd=cmd[1],
                       stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    return int(r.stderr.decode().strip().splitlines()[-1])

cmds = {"zen": zen, "ours": ours, "true": true}
wall = {k: [] for k in cmds}
rss = {k: [] for k in ("zen", "ours")}
text = {}
for i in range(WARMUP + runs):
    order = ["zen", "ours", "true"] if i % 2 == 0 else ["ours", "zen", "true"]
    for k in order:
        ms, text[k] = once(cmds[k])
        if i >= WARMUP:
            wall[k].append(ms)
for i in range(runs):
    for k in (["zen", "ours"] if i % 2 == 0 else ["ours", "zen"]):
        rss[k].append(rss_kib(cmds[k]))

# Both answer the same: ZEN's {bare_metal, offer, monthly_cny, breakeven_hours} against the
# record's deployment, offer and costs (the mapping is in benches/zen-peer/rules/policy.yaml).
z, o = json.loads(text["zen"]), json.loads(text["ours"])
agree = (("bare_metal" if z["bare_metal"] else "container") == o["deployment"]
         and z["offer"] == o["offer"]
         and float(z["monthly_cny"]) == float(o["costs"]["recommended_monthly_cny"])
         and abs(z["breakeven_hours"] - o["costs"]["breakeven_hours_per_gpu"]) < 1e-9)
if not agree:
    sys.exit(f"bench-peer: the one-shot answers differ:\nZEN:    {text['zen']}\ndecide: {text['ours']}")

summary = {
    "runs": runs,
    "wall_ms": {k: {"median": statistics.median(v), "min": min(v), "max": max(v)}
                for k, v in wall.items()},
    "rss_kib": {k: {"median": statistics.median(v), "max": max(v)} for k, v in rss.items()},
    "output_bytes": {"zen": len(text["zen"].encode()), "ours": len(text["ours"].encode())},
    "commands": {"zen": " ".join(zen[0][1:]), "ours": " ".join(ours[0][1:])},
}
with open(os.path.join(out, "one-shot.json"), "w") as f:
    json.dump(summary, f, indent=2)
with open(os.path.join(out, "one-shot-outputs.txt"), "w") as f:
    f.write("ZEN:\n" + text["zen"] + "\ndecide:\n" + text["ours"])
PY

echo "== table" >&2
OUT="$out" python3 - <<'PY'
import json, os, re, sys

out = os.environ["OUT"]
zen_text = open(os.path.join(out, "zen-bench.txt"), encoding="utf-8").read()
peer_text = open(os.path.join(out, "peer-bench.txt"), encoding="utf-8").read()
one = json.load(open(os.path.join(out, "one-shot.json")))

def zen_row(name):
    """zen-bench's mean per call (loop wall time / N, median of its 5 passes) and its median
    call (p50 of a pass with a timer around every call), in µs."""
    m = re.search(r"^" + re.escape(name) + r"\s+([\d.]+) µs .*\| p50\s+([\d.]+)", zen_text, re.M)
    if not m:
        sys.exit(f"bench-peer: no row `{name}` in zen-bench's output")
    return float(m.group(1)), float(m.group(2))

def zen_setup():
    """read+parse the graph file, create_decision and Decision::compile, in µs."""
    m = re.search(r"read\+parse JSON file ([\d.]+) µs, create_decision ([\d.]+) µs, "
                  r"Decision::compile ([\d.]+) µs", zen_text)
    if not m:
        sys.exit("bench-peer: no setup line in zen-bench's output")
    return sum(float(x) for x in m.groups())

UNITS = {"ps": 1e-6, "ns": 1e-3, "µs": 1.0, "us": 1.0, "ms": 1e3, "s": 1e6}

def divan(name):
    """divan's mean (all calls) and median (of its samples' means) for one benchmark of
    benches/peer.rs, in µs."""
    for line in peer_text.splitlines():
        m = re.match(r"^[├╰]─ (\S+)\s+(.*)$", line)
        if m and m.group(1) == name:
            cells = [c.split() for c in m.group(2).split("│")]
            us = lambda c: float(c[0]) * UNITS[c[1]]
            return us(cells[3]), us(cells[2])
    sys.exit(f"bench-peer: no benchmark `{name}` in cargo bench's output")

# Per profile, two statistics of each side: the mean over all calls (what zen-bench headlines;
# a busy machine inflates it) and a median (more robust to other processes; ours is the median
# of 10-call samples, ZEN's the median single call).
rows = []
for what, ours_name, zen_name in [
    ("evaluate, no trace", "evaluate_no_trace", "compiled | poll_once (no runtime)"),
    ("evaluate, trace", "evaluate_trace", "compiled | TRACE on | poll_once"),
    ("JSON text in -> JSON out", "json_in_json_out",
     "compiled | JSON str -> Variable -> eval -> JSON str"),
]:
    (o_mean, o_median), (z_mean, z_p50) = divan(ours_name), zen_row(zen_name)
    rows.append((f"{what}, mean (µs/profile)", o_mean, z_mean))
    rows.append((f"{what}, median (µs/profile)", o_median, z_p50))
rows += [
    ("load + compile the policy, median (µs)", divan("compile")[1], zen_setup()),
    ("one-shot run, median wall (ms)", one["wall_ms"]["ours"]["median"],
     one["wall_ms"]["zen"]["median"]),
    ("one-shot run, fastest wall (ms)", one["wall_ms"]["ours"]["min"],
     one["wall_ms"]["zen"]["min"]),
    ("one-shot run, max RSS (MiB, median)", one["rss_kib"]["ours"]["median"] / 1024,
     one["rss_kib"]["zen"]["median"] / 1024),
    ("one-shot output (bytes)", one["output_bytes"]["ours"], one["output_bytes"]["zen"]),
]
print(open(os.path.join(out, "machine.txt")).read().rstrip())
print(f"one-shot: {one['runs']} runs each after 3 warm-ups, alternating; spawning /bin/true "
      f"alone: median {one['wall_ms']['true']['median']:.2f} ms")
print(f"  ours: decide {one['commands']['ours']}")
print(f"  ZEN:  zen-one {one['commands']['zen']}")
print()
w = max(len(r[0]) for r in rows)
print(f"| {'measure':<{w}} | {'ours':>9} | {'ZEN':>9} | {'ratio':>6} |")
print(f"|{'-' * (w + 2)}|{'-' * 10}:|{'-' * 10}:|{'-' * 7}:|")
for name, ours, zen in rows:
    fmt = (lambda x: f"{x:.0f}") if name.endswith("(bytes)") else (lambda x: f"{x:.2f}")
    print(f"| {name:<{w}} | {fmt(ours):>9} | {fmt(zen):>9} | {ours / zen:>6.2f} |")
print()
print("ours: divan (benches/peer.rs), 10,000 samples of 10 calls; ZEN: zen-bench N profiles, "
      "compiled decision polled once, mean = median of 5 passes, median = p50 of a timed pass")
print("raw outputs in " + out)
PY

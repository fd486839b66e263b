#!/usr/bin/env python3
"""Writes a generated fleet of profiles as JSON lines, for measuring `decide batch`.

    scripts/fleet.py COUNT > fleet.jsonl

Each line is one of `examples/*.yaml` (in name order, round robin) with its name numbered and
its busy hours, GPU count and model size varied within the profile format's ranges, from a
fixed seed: the same COUNT gives the same bytes. Needs PyYAML (`pip install pyyaml`).
"""

import json
import pathlib
import random
import sys

try:
    import yaml
except ImportError:
    sys.exit("scripts/fleet.py needs PyYAML: pip install pyyaml")


def main() -> None:
    if len(sys.argv) != 2 or not sys.argv[1].isdigit():
        sys.exit("usage: scripts/fleet.py COUNT > fleet.jsonl")
    count = int(sys.argv[1])
    root = pathlib.Path(__file__).resolve().parent.parent
    examples = [yaml.safe_load(p.read_text()) for p in sorted(root.glob("examples/*.yaml"))]
    rng = random.Random(20260904)
    out = sys.stdout
    for i in range(count):
        profile = json.loads(json.dumps(examples[i % len(examples)]))
        profile["name"] = f"{profile['name']} #{i + 1}"
        usage = profile["usage"]
        usage["hours_per_gpu_month"] = rng.randrange(0, 745)
        usage["gpus"] = rng.choice([1, 2, 4, 8, 8, 16])
        workload = profile["workload"]
        workload["model_params_b"] = round(workload["model_params_b"] * rng.uniform(0.5, 2.0), 1)
        out.write(json.dumps(profile, ensure_ascii=False, separators=(",", ":")))
        out.write("\n")


if __name__ == "__main__":
    main()

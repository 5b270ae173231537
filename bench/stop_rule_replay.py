#!/usr/bin/env python3
"""The stopping rule replayed over long sample series (docs/perf.md): where would a ranked case
have stopped under other settings, and how far would its median be from the long series'?

Input: `kj eval --json` results of runs sampled for long (`--min-time 2`). For each ranked case,
the rule (harness/kj_harness/timing.py, stop_reason) is applied to every prefix of the case's
samples, the elapsed time of a prefix taken as its share of the case's sampling time (samples
cost about the same each); printed per setting and case: samples and seconds at the stop, the
median at the stop against the whole series' median, and the spread of those medians over the
given runs.

  bench/stop_rule_replay.py eval-long-1.json eval-long-2.json ... \\
      --setting min_seconds=0.5 --setting min_seconds=0.25 --setting min_seconds=0.25,target_rel_sem=0.002
"""

import argparse
import json
import os
import statistics
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "harness"))

from kj_harness import timing  # noqa: E402


def parse_setting(text: str) -> dict:
    setting = {}
    for part in text.split(","):
        key, _, value = part.partition("=")
        if key not in timing.DEFAULTS:
            raise SystemExit(f"unknown setting {key!r} (one of {', '.join(timing.DEFAULTS)})")
        setting[key] = type(timing.DEFAULTS[key])(value)
    return setting


def ranked_cases(path: str) -> list[dict]:
    with open(path, encoding="utf-8") as f:
        result = json.load(f)
    cases = [c for c in result.get("benchmarks", []) if c.get("phase") == "ranked"]
    if not cases:
        raise SystemExit(f"{path}: no ranked benchmark cases (verdict {result.get('verdict')})")
    return cases


def stop_at(samples: list[float], seconds: float, settings: dict) -> tuple[int, str]:
    """The number of samples the rule would have taken, and why it stopped (None: the series
    ended first)."""
    per_sample = seconds / len(samples)
    for n in range(1, len(samples) + 1):
        reason = timing.stop_reason(samples[:n], n * per_sample, settings)
        if reason is not None:
            return n, reason
    return len(samples), "series_ended"


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("results", nargs="+", help="kj eval --json results with long series")
    parser.add_argument("--setting", action="append", default=[],
                        help="key=value[,key=value]: settings over timing.DEFAULTS (repeatable)")
    args = parser.parse_args()
    runs = [ranked_cases(p) for p in args.results]
    settings = [("defaults", {})] + [(s, parse_setting(s)) for s in args.setting]
    cases = len(runs[0])
    print("| setting | case | samples at stop (per run) | seconds at stop, mean | stop reasons "
          "| median at stop / whole series, per run | spread of the runs' medians at stop |")
    print("|---|---|---|---|---|---|---|")
    totals = {}
    for name, over in settings:
        s = timing.settings_from(over)
        total = 0.0
        for index in range(cases):
            counts, seconds, reasons, ratios, medians = [], [], [], [], []
            for run in runs:
                case = run[index]
                samples = [float(x) for x in case["samples_ns"]]
                spent = float(case["seconds"]["timing"]) - float(case["seconds"].get("prepare", 0))
                n, reason = stop_at(samples, spent, s)
                median = statistics.median(samples[:n])
                counts.append(n)
                seconds.append(spent * n / len(samples))
                reasons.append(reason)
                ratios.append(median / statistics.median(samples))
                medians.append(median)
            spread = (max(medians) - min(medians)) / statistics.median(medians) * 100
            total += statistics.mean(seconds)
            print(f"| {name} | {index} | {', '.join(map(str, counts))} | "
                  f"{statistics.mean(seconds):.3f} | {', '.join(sorted(set(reasons)))} | "
                  f"{', '.join(f'{r:.4f}' for r in ratios)} | {spread:.2f} % |")
        totals[name] = total
    print()
    for name, total in totals.items():
        print(f"{name}: sampling {total:.2f} s a run over {cases} cases (preparation not included)")
    return 0


if __name__ == "__main__":
    sys.exit(main())

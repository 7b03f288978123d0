#!/usr/bin/env python3
"""Reads the sanitizer logs of one run (files named <prefix>.<pid>, written by log_path=) and
fails on any report in project code.

Suppressions for the toolchain's libraries live in lsan.supp and tsan.supp beside this file, and
are applied by the sanitizers themselves. One case cannot be a suppression and is decided here:

* A leak report whose only blocks are Swift weak-reference side tables (allocated by
  swift::RefCounts::formWeakReference, 32 bytes each) and nothing else. The Swift runtime keeps
  an object's side-table address in the object's header shifted right by 3 with flag bits set, so
  LeakSanitizer cannot see that reference: every object that has a side table and is still alive
  at exit() shows its side table as a "direct leak". Were the object itself leaked, it would be
  reported too (as an indirect leak reachable from the side table), so a report of side tables
  alone is the objects-alive-at-exit case. A suppression would be wrong here: LeakSanitizer treats
  a suppressed block as a root, which would hide a leaked object behind its side table.

Usage: triage.py <log prefix> (e.g. .build-asan/sanitizer-logs/asan)
Prints each failing report and a summary; exit status 1 when any report is in project code.
With APPKERNEL_LSAN=report, leaks in project code are printed and counted but do not fail the
run (memory errors, races and exclusivity traps always do): a stopgap while a known leak waits
for its owner's fix, never the default.
"""
import glob
import os
import re
import sys

SIDE_TABLE = "formWeakReference"


def blocks_of(report):
    return [b for b in re.split(r"\n\s*\n", report) if re.search(r"(Direct|Indirect) leak of", b)]


def triage_leaks(text):
    """Returns the failing leak blocks of one log (empty when only side tables remain)."""
    failing = []
    for report in re.split(r"(?==+\n==\d+==ERROR: LeakSanitizer)", text):
        if "ERROR: LeakSanitizer" not in report:
            continue
        blocks = blocks_of(report)
        others = [b for b in blocks if not (b.lstrip().startswith("Direct") and SIDE_TABLE in b)]
        failing.extend(others)
    return failing


def main():
    prefix = sys.argv[1]
    files = sorted(glob.glob(prefix + ".*"))
    bad = 0
    leaking = 0
    side_tables_only = 0
    for path in files:
        text = open(path, errors="replace").read()
        if "ERROR: LeakSanitizer" in text:
            failing = triage_leaks(text)
            if failing:
                leaking += 1
                print(f"== {path}: {len(failing)} leak(s) in project code")
                for block in failing[:20]:
                    print(block.strip()[:4000])
                    print()
            else:
                side_tables_only += 1
        for kind in ("ERROR: AddressSanitizer", "WARNING: ThreadSanitizer", "ERROR: ThreadSanitizer", "ThreadSanitizer: failed",
                     "AddressSanitizer: failed",
                     "runtime error:", "Simultaneous accesses"):
            if kind in text:
                bad += 1
                print(f"== {path}: {kind}")
                print(text[:20000])
                break
    report_only = os.environ.get("APPKERNEL_LSAN") == "report"
    print(f"sanitizer logs: {len(files)} file(s), {bad} with errors or races, {leaking} with leaks in project code"
          f"{' (APPKERNEL_LSAN=report: not failing)' if report_only and leaking else ''}, "
          f"{side_tables_only} with only the side tables of objects alive at exit")
    return 1 if bad or (leaking and not report_only) else 0


if __name__ == "__main__":
    sys.exit(main())

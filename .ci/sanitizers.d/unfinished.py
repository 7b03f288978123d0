"""The tests a Swift Testing log shows started and never ended: what a stopped run was doing.

    python3 .ci/sanitizers.d/unfinished.py <test output>

Main-actor tests start at once and wait their turn, so the list is long; the runner's
"still running after" lines (Tests/Support/TestSupport) name the ones that ran longest.
"""
import re
import sys

open_tests = {}
with open(sys.argv[1], encoding="utf-8", errors="replace") as log:
    for line in log:
        line = line.rstrip("\n")
        started = re.match(r"◇ Test (.+?) started\.$", line)
        if started:
            open_tests[started.group(1)] = open_tests.get(started.group(1), 0) + 1
            continue
        ended = re.match(r"[✔✘━] Test (.+?)(?: with \d+ test cases?)? (?:passed|failed)(?: after| with|$)", line)
        if ended and ended.group(1) in open_tests:
            open_tests[ended.group(1)] -= 1
names = [name for name, count in open_tests.items() if count > 0 and name != "run" and not name.startswith("case ")]
print(f"{len(names)} started and not ended: " + ", ".join(names[:40]) + (" …" if len(names) > 40 else ""))

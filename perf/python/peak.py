"""peak.py TEST SEED — runs one CPython regression test in this process (`python3 -m test --randseed SEED
TEST`, no worker subprocess: the tests' random choices fixed by SEED, so runs with the same SEED do the same
work) and, at exit, writes `peak_kib=N passed=0|1` to fd 3: N = VmHWM + HugetlbPages of this
process, the one that ran the test."""
import atexit
import os
import sys

state = {"code": 1}


def report():
    fields = {}
    with open("/proc/self/status") as f:
        for line in f:
            key, _, value = line.partition(":")
            fields[key] = value.split()
    peak = int(fields["VmHWM"][0]) + int(fields.get("HugetlbPages", ["0"])[0])
    os.write(3, f"peak_kib={peak} passed={int(state['code'] == 0)}\n".encode())


atexit.register(report)
if len(sys.argv) != 3 or not sys.argv[2].isdigit():
    sys.exit("usage: peak.py TEST SEED (SEED: a non-negative integer)")
# Left out: test_email's test_make_msgid_collisions makes message ids in 5 threads for 3 seconds, so its
# peak (170 to 870 MiB) measures the CPU's speed, not the allocator. It needs the `cpu` resource, but its
# decorator reads the resource list when the module is imported, and the test ran in some set-ups and not
# in others (here: with stdout and stderr to one file), whatever -u said.
sys.argv = ["python3 -m test", "-q", "--fail-env-changed", "-i", "test_make_msgid_collisions",
            "--randseed", sys.argv[2], sys.argv[1]]
try:
    from test.libregrtest.main import main
    main()
except SystemExit as e:
    state["code"] = e.code if isinstance(e.code, int) else 1
    raise

#!/usr/bin/env python3
"""Reading a file costs what its size and the memory budget allow, checked before it is read: files made here (no big
file is committed) run through the real binary, whose peak resident memory (the child's ru_maxrss) is measured.

Cases:
  spaces_past_budget  200 MB of spaces, trace --memory-budget 64M: refused before reading with the budget's message
                      (it was read whole first: 214 MB, then "the file is empty")
  scenario_too_large  a scenario of 64 MiB + 3 bytes: refused as larger than a scenario may be, before it is read
                      (it was read and parsed first: 269 MB)
  unknown_keys        a 24 MB scenario of 2,000,000 unknown keys: refused at the first (a tree of them took 253 MB)
  batches_10mb        train on a 10.3 MB batches file of 75,000 batches of 4 sequences of 16 ids: trains (it was
                      refused as "too many small values"), within 160 MB

Peaks are checked in Release only (--sanitize: the exit code and the message alone).
"""
import argparse
import json
import os
import subprocess
import sys
import tempfile

MIB = 1 << 20


# The files are written a piece at a time: this script's own memory is counted in its child's peak (a fork's pages
# count until exec).
def write_spaces(path):
    with open(path, "w") as f:
        for _ in range(200):
            f.write(" " * (1000 * 1000))


def write_big_scenario(path):
    # Rows of numbers (no long string), padded with spaces to 64 MiB + 3 bytes.
    head = '{"name": "big", "tokens": ["a", "b"], "embeddings": [[1, 0], [0, 1]], "attention": {"heads": 1}}'
    with open(path, "w") as f:
        f.write(head)
        for _ in range(64):
            f.write(" " * MIB)
    os.truncate(path, 64 * MIB + 3)  # the padding's end cut to the size


def write_unknown_keys(path):
    with open(path, "w") as f:
        f.write("{")
        for start in range(0, 2000000, 100000):
            f.write(("," if start else "") + ",".join('"k%d":1' % i for i in range(start, start + 100000)))
        f.write("}")


def write_batches(path):
    sequence = "[" + ",".join(["1"] * 16) + "]"
    batch = "[" + ",".join([sequence] * 4) + "]"
    with open(path, "w") as f:
        f.write('{"batches":[' + batch)
        for _ in range(74999):
            f.write("," + batch)
        f.write("]}")


def run(command, folder):
    """The exit code, standard error and peak resident bytes of this one process (wait4's own rusage)."""
    with open(os.path.join(folder, "err"), "w+b") as err:
        child = subprocess.Popen(command, stdout=subprocess.DEVNULL, stderr=err)
        _, status, usage = os.wait4(child.pid, 0)
        child.returncode = os.waitstatus_to_exitcode(status)
        err.seek(0)
        return child.returncode, err.read().decode(errors="replace"), usage.ru_maxrss * 1024


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--binary", required=True)
    p.add_argument("--case", required=True,
                   choices=["spaces_past_budget", "scenario_too_large", "unknown_keys", "batches_10mb"])
    p.add_argument("--sanitize", action="store_true")
    a = p.parse_args()
    with tempfile.TemporaryDirectory() as d:
        f = os.path.join(d, "input.json")
        if a.case == "spaces_past_budget":
            write_spaces(f)
            command, code, most = [a.binary, "trace", f, "--memory-budget", "64M"], 2, 64 * MIB
            # 200 MB of text and ten times that for a tree, and the program's 16 MiB.
            message = ("attention-lab: %s: reading this file and parsing it needs 2,216,777,216 bytes (2.06 GiB) but "
                       "the memory budget is 67,108,864 bytes (64.0 MiB); use --memory-budget, or a smaller file\n" % f)
        elif a.case == "scenario_too_large":
            write_big_scenario(f)
            command, code, most = [a.binary, "trace", f], 2, 64 * MIB
            message = ("attention-lab: %s: file is larger than 64 MiB, the limit for a scenario file (found "
                       "67,108,867 bytes (64.0 MiB))\n" % f)
        elif a.case == "unknown_keys":
            write_unknown_keys(f)
            command, code, most = [a.binary, "trace", f], 2, 64 * MIB
            message = ("attention-lab: %s: k0: unknown key (expected one of: name, description, tokens, embeddings, "
                       "context, attention, weights, seed, weight_scale)\n" % f)
        else:
            model = os.path.join(d, "m.json")
            subprocess.run([a.binary, "train", "--task", "copy", "--steps", "1", "--save", model, "--seq-len", "16"],
                           check=True, stdout=subprocess.DEVNULL)
            write_batches(f)
            command, code, most, message = [a.binary, "train", "--model", model, "--batches", f, "--steps", "1"], 0, \
                160 * MIB, ""
        found, err, peak = run(command, d)
    ok = found == code and err == message
    if not a.sanitize and peak > most:
        ok = False
        print("peak resident memory %d bytes, more than %d" % (peak, most))
    if not ok:
        print("expected exit %d and: %r" % (code, message))
        print("found exit %d and: %r" % (found, err[:2000]))
        return 1
    print("%s: exit %d, peak %.1f MiB" % (a.case, found, peak / MIB))
    return 0


if __name__ == "__main__":
    sys.exit(main())

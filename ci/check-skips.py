#!/usr/bin/env python3
"""Skip guard: lists the tests a run skipped and, under CI=true, fails on any skip that
ci/skip-allowlist.txt does not list (format: see the top of that file and docs/testing.md).

Usage: ci/check-skips.py SCOPE [--junit FILE]... [--gtest-log FILE]... [--allowlist FILE]
  SCOPE        where the tests ran (ctest, asan, tsan, vm, ...); allowlist patterns are matched
               against "SCOPE:TEST_NAME".
  --junit      JUnit XML: ctest --output-junit, or a gtest binary's --gtest_output=xml:FILE.
  --gtest-log  gtest console output ("[  SKIPPED ] Suite.Test/param" lines), e.g. from the VM.
Exit 0: no skip, or every skip listed (or CI is not "true": then unlisted skips only warn).
Exit 1: an unlisted skip under CI=true, an allowlist line without a reason, an input that
cannot be read or that holds no test at all (a guard that saw nothing proves nothing).
"""
import argparse
import fnmatch
import os
import re
import sys
import xml.etree.ElementTree as ET

HERE = os.path.dirname(os.path.abspath(__file__))


def load_allowlist(path):
    entries = []
    with open(path, encoding="utf-8") as f:
        for no, line in enumerate(f, 1):
            text = line.strip()
            if not text or text.startswith("#"):
                continue
            pattern, sep, reason = text.partition("#")
            pattern, reason = pattern.strip(), reason.strip()
            if not sep or not reason:
                sys.exit(f"{path}:{no}: entry without a reason ('PATTERN  # REASON'): {text}")
            if ":" not in pattern or len(pattern.split()) != 1:
                sys.exit(f"{path}:{no}: pattern must be one word 'SCOPE:TEST_NAME_GLOB': {text}")
            entries.append((pattern, reason, no))
    return entries


def skipped_in_junit(path):
    """(names of skipped tests, number of tests) in a ctest or gtest JUnit file."""
    root = ET.parse(path).getroot()
    skipped, total = [], 0
    for tc in root.iter("testcase"):
        total += 1
        name = tc.get("name", "")
        # gtest XML: name="Test/param" classname="Suite"; ctest: name is the full ctest name.
        if tc.get("result") is not None:  # gtest
            name = f"{tc.get('classname', '')}.{name}"
            is_skip = tc.get("result") == "skipped"
        else:  # ctest: status="skipped" plus a <skipped> child
            is_skip = tc.get("status") in ("skipped", "notrun") or tc.find("skipped") is not None
        if is_skip:
            # gtest_discover_tests appends the printed parameter to ctest names
            # ("Suite.Test/verbs  # GetParam() = verbs"): match the test name alone.
            skipped.append(name.split("  # GetParam() = ")[0].rstrip())
    return skipped, total


def skipped_in_gtest_log(path):
    skipped, total = [], 0
    with open(path, encoding="utf-8", errors="replace") as f:
        for line in f:
            if line.startswith("[       OK ] ") or line.startswith("[  FAILED  ] "):
                total += 1
            m = re.match(r"^\[  SKIPPED \] (\S+) \(", line)
            if m:
                skipped.append(m.group(1))
                total += 1
    return skipped, total


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("scope")
    ap.add_argument("--junit", action="append", default=[])
    ap.add_argument("--gtest-log", action="append", default=[])
    ap.add_argument("--allowlist", default=os.path.join(HERE, "skip-allowlist.txt"))
    a = ap.parse_args()
    if not a.junit and not a.gtest_log:
        sys.exit("check-skips: give at least one --junit or --gtest-log file")
    allow = load_allowlist(a.allowlist)
    skipped, total = [], 0
    for path in a.junit:
        s, t = skipped_in_junit(path)
        skipped += s
        total += t
    for path in a.gtest_log:
        s, t = skipped_in_gtest_log(path)
        skipped += s
        total += t
    if total == 0:
        sys.exit(f"check-skips [{a.scope}]: no test results in {a.junit + a.gtest_log}")
    unlisted = []
    for name in skipped:
        key = f"{a.scope}:{name}"
        hit = next((e for e in allow if fnmatch.fnmatchcase(key, e[0])), None)
        if hit:
            print(f"  skipped (allowed, line {hit[2]}: {hit[1]}): {key}")
        else:
            unlisted.append(key)
    for key in unlisted:
        print(f"  SKIPPED, NOT IN {os.path.relpath(a.allowlist)}: {key}")
    ci = os.environ.get("CI") == "true"
    print(f"check-skips [{a.scope}]: {total} tests, {len(skipped)} skipped, "
          f"{len(unlisted)} not in the allowlist" + ("" if ci else " (CI unset: not enforced)"))
    return 1 if unlisted and ci else 0


if __name__ == "__main__":
    sys.exit(main())

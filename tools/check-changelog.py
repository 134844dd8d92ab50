#!/usr/bin/env python3
"""Checks CHANGELOG.md against Keep a Changelog 1.1.0 and the release rules of docs/releasing.md.

- `## [Unreleased]` first, then releases `## [X.Y.Z] - YYYY-MM-DD`, newest first (versions
  strictly descending, dates not increasing), each with at least one of the subsections
  `### Added|Changed|Deprecated|Removed|Fixed|Security` (each at most once, in that order, none
  empty); no other level-2 or level-3 heading.
- The newest release is `project(VERSION)` in CMakeLists.txt.
- In a git checkout: every tag `vX.Y.Z` names a release of the file, and the CHANGELOG.md of the
  tagged commit has X.Y.Z as its newest release; `git describe --tags --match 'v[0-9]*'` names
  the newest release (so the release is tagged). A shallow clone cannot see tags: said, not
  judged; so can a clone made without tags (`git clone --no-tags`, a fork): with no `v*` tag at
  all the rule is said to be left out. Outside a git checkout the git part is said to be left
  out.

Usage: tools/check-changelog.py [SOURCE_DIR]. Exit 0 pass, 1 with one line per problem.
"""
import datetime
import os
import re
import subprocess
import sys

SUBSECTIONS = ["Added", "Changed", "Deprecated", "Removed", "Fixed", "Security"]
RELEASE = re.compile(r"^## \[(\d+)\.(\d+)\.(\d+)\] - (\d{4}-\d{2}-\d{2})$")


def parse(text):
    """[(version tuple | None for Unreleased, date, {subsection: entries}, line)], problems."""
    releases, problems = [], []
    current = sub = None
    for n, line in enumerate(text.splitlines(), 1):
        if line.startswith("## "):
            m = RELEASE.match(line)
            if line == "## [Unreleased]":
                if releases:
                    problems.append(f"line {n}: [Unreleased] must be the first section")
                current = (None, None, {}, n)
            elif m:
                try:
                    date = datetime.date.fromisoformat(m.group(4))
                except ValueError:
                    problems.append(f"line {n}: {m.group(4)} is not a date")
                    date = None
                current = (tuple(int(x) for x in m.group(1, 2, 3)), date, {}, n)
            else:
                problems.append(f"line {n}: '{line}' is neither '## [Unreleased]' nor "
                                "'## [X.Y.Z] - YYYY-MM-DD'")
                current = None
                continue
            releases.append(current)
            sub = None
        elif line.startswith("### "):
            name = line[4:].strip()
            if current is None:
                problems.append(f"line {n}: '{line}' outside a release")
            elif name not in SUBSECTIONS:
                problems.append(f"line {n}: '### {name}': not one of {', '.join(SUBSECTIONS)}")
            elif name in current[2]:
                problems.append(f"line {n}: '### {name}' twice in one release")
            elif any(SUBSECTIONS.index(k) > SUBSECTIONS.index(name) for k in current[2]):
                problems.append(f"line {n}: '### {name}' out of order ({', '.join(SUBSECTIONS)})")
            else:
                current[2][name] = 0
                sub = name
        elif line.startswith("#") and releases:
            problems.append(f"line {n}: '{line.split()[0]}' heading inside the releases")
        elif line.startswith("- ") and current is not None:
            if sub is None:
                problems.append(f"line {n}: an entry before any ### subsection")
            else:
                current[2][sub] += 1
    return releases, problems


def check_order(releases):
    problems = []
    if not releases or releases[0][0] is not None:
        problems.append("the first section must be '## [Unreleased]'")
    dated = [r for r in releases if r[0] is not None]
    if not dated:
        problems.append("no release section '## [X.Y.Z] - YYYY-MM-DD'")
    for (v1, d1, _, n1), (v2, d2, _, n2) in zip(dated, dated[1:]):
        if not v1 > v2:
            problems.append(f"line {n2}: {'.'.join(map(str, v2))} is not older than "
                            f"{'.'.join(map(str, v1))} above it (line {n1})")
        if d1 and d2 and d1 < d2:
            problems.append(f"line {n2}: dated {d2}, after the newer release above it ({d1})")
    for v, _, subs, n in dated:
        if not subs:
            problems.append(f"line {n}: release {'.'.join(map(str, v))} has no subsection")
        for name, count in subs.items():
            if count == 0:
                problems.append(f"line {n}: release {'.'.join(map(str, v))}: '### {name}' empty")
    return problems


def git(src, *args):
    r = subprocess.run(["git", "-C", src, *args], capture_output=True, text=True)
    return r.stdout.strip() if r.returncode == 0 else None


def check_tags(src, versions, newest):
    """Problems and notes of the git part (see the module comment)."""
    if git(src, "rev-parse", "--is-inside-work-tree") != "true":
        return [], ["not a git checkout: the release tags are not checked"]
    if git(src, "rev-parse", "--is-shallow-repository") == "true":
        return [], ["a shallow clone: its tags are not all visible, so they are not checked"]
    problems, notes = [], []
    tags = [t for t in (git(src, "tag", "--list", "v[0-9]*") or "").split() if t]
    if not tags:
        return [], ["this checkout has no release tag at all (cloned without tags, or a fork): "
                    "whether the newest release is tagged is not judged here"]
    for t in tags:
        m = re.fullmatch(r"v(\d+)\.(\d+)\.(\d+)", t)
        if not m:
            problems.append(f"tag {t}: not vX.Y.Z")
            continue
        v = tuple(int(x) for x in m.groups())
        if v not in versions:
            problems.append(f"tag {t}: CHANGELOG.md has no release {t[1:]}")
            continue
        old = git(src, "show", f"{t}:CHANGELOG.md")
        first = [r for r in parse(old or "")[0] if r[0] is not None]
        if not first or first[0][0] != v:
            problems.append(f"tag {t}: the tagged commit's CHANGELOG.md does not have {t[1:]} as "
                            "its newest release (tag the commit that dates its section)")
    describe = git(src, "describe", "--tags", "--match", "v[0-9]*")
    want = "v" + ".".join(map(str, newest))
    if describe is None:
        problems.append(f"no release tag: git describe names no release ({want} is the newest "
                        "in CHANGELOG.md: tag its commit, docs/releasing.md)")
    elif not (describe == want or describe.startswith(want + "-")):
        problems.append(f"git describe says {describe}: the newest release {want} is not tagged "
                        "(docs/releasing.md)")
    else:
        notes.append(f"git describe: {describe}")
    return problems, notes


def main():
    if len(sys.argv) > 1 and sys.argv[1].startswith("-"):
        print(__doc__.strip())
        return 0 if sys.argv[1] in ("-h", "--help") else 2
    src = os.path.abspath(sys.argv[1] if len(sys.argv) > 1 else
                          os.path.join(os.path.dirname(__file__), ".."))
    text = open(os.path.join(src, "CHANGELOG.md"), encoding="utf-8").read()
    releases, problems = parse(text)
    problems += check_order(releases)
    versions = [r[0] for r in releases if r[0] is not None]
    cm = open(os.path.join(src, "CMakeLists.txt"), encoding="utf-8").read()
    m = re.search(r"project\(rdmabench VERSION (\d+)\.(\d+)\.(\d+)", cm)
    notes = []
    if not m:
        problems.append("CMakeLists.txt: no project(rdmabench VERSION X.Y.Z)")
    elif versions and tuple(int(x) for x in m.groups()) != versions[0]:
        problems.append(f"CMakeLists.txt says {'.'.join(m.groups())}, the newest release in "
                        f"CHANGELOG.md is {'.'.join(map(str, versions[0]))}")
    if versions:
        p, notes = check_tags(src, versions, versions[0])
        problems += p
    for line in problems:
        print(f"check-changelog: {line}")
    for line in notes:
        print(f"check-changelog: note: {line}")
    if not problems:
        print(f"check-changelog: ok: {len(versions)} releases, newest "
              f"{'.'.join(map(str, versions[0]))}")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())

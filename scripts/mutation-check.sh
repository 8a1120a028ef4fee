#!/usr/bin/env bash
# scripts/mutation-check.sh: does the test suite catch one-line bugs in the scheduler core?
#
# Applies each mutant of a list (default scripts/mutants.txt; format described at its top)
# to a temporary copy of the working tree (tracked and untracked files, never the tree
# itself), rebuilds incrementally, runs the relevant tests cheapest first and stops at the
# first that fails ("killed"). A mutant no test notices "survived".
#
# Usage: scripts/mutation-check.sh [--list FILE] [--keep] [--all] [ID...]
#   ID...    run only these mutants (default: all)
#   --keep   keep the temporary copy and its build (printed at the end)
#   --all    run every test step on each mutant and list all that kill it (slower)
# Environment:
#   HIVED_MUTATION_DIR    where the copy and its build go (default: a fresh mktemp -d);
#                         reusing one makes the next run's baseline build incremental
#   HIVED_PROPERTY_SEEDS  seeds per property/oracle test case (default here: 3, to keep a
#                         run near 15 minutes on two cores)
#   HIVED_SHARED_DIR      HiveD's configs and traces (default: ../shared beside the checkout)
#   HIVED_MUTATION_STEPS  the test steps to run, by name, space-separated (default: all;
#                         e.g. "unit_scheduler unit_sharing" for the sharing mutants)
#
# Exit status: 0 when every mutant was killed; 1 when one survived, did not compile, or its
# `find` text is not found exactly once (so the list cannot rot silently); 2 on usage errors
# or when the unmutated tree fails its own tests.
set -euo pipefail

# Everything runs inside main, which bash parses whole before running: editing this file
# during a run cannot change the run.
main() {
root=$(cd "$(dirname "$0")/.." && pwd)
list="$root/scripts/mutants.txt"
keep=0
all=0
only=()
while [[ $# -gt 0 ]]; do
  case "$1" in
    --list) list=$(realpath "$2"); shift 2 ;;
    --keep) keep=1; shift ;;
    --all) all=1; shift ;;
    -h|--help) sed -n '2,25p' "$0"; exit 0 ;;
    -*) echo "unknown option $1" >&2; exit 2 ;;
    *) only+=("$1"); shift ;;
  esac
done
[[ -f "$list" ]] || { echo "no mutants list: $list" >&2; exit 2; }

# Parse the list into parallel arrays; check every `find` occurs exactly once.
ids=() files=() finds=() repls=() whys=()
status_parse=0
parse() {
  python3 - "$list" "$root" <<'PY'
import sys
path, root = sys.argv[1], sys.argv[2]
blocks, cur, start = [], {}, None
for n, raw in enumerate(open(path, encoding="utf-8").read().split("\n"), 1):
    if raw.startswith("#"):
        continue
    if not raw.strip():
        if cur:
            blocks.append((start, cur)); cur = {}
        continue
    key, sep, value = raw.partition(":")
    if not sep or key not in ("id", "file", "find", "replace", "why"):
        print(f"ERROR\t{path}:{n}: expected 'id|file|find|replace|why: ...', got {raw!r}")
        continue
    if not cur:
        start = n
    cur[key] = value[1:] if value.startswith(" ") else value
if cur:
    blocks.append((start, cur))
seen = set()
for line, b in blocks:
    missing = [k for k in ("id", "file", "find", "replace") if k not in b]
    if missing:
        print(f"ERROR\t{path}:{line}: mutant without {', '.join(missing)}"); continue
    if b["id"] in seen:
        print(f"ERROR\t{path}:{line}: duplicate id {b['id']}"); continue
    seen.add(b["id"])
    try:
        text = open(f"{root}/{b['file']}", encoding="utf-8").read()
    except OSError as e:
        print(f"ERROR\t{path}:{line}: {b['id']}: cannot read {b['file']}: {e.strerror}"); continue
    count = text.count(b["find"])
    if count != 1:
        print(f"ERROR\t{path}:{line}: {b['id']}: `find` text occurs {count} times in {b['file']} (needs exactly 1)")
        continue
    print("\t".join(["MUTANT", b["id"], b["file"], b["find"], b["replace"], b.get("why", "")]))
PY
}
while IFS=$'\t' read -r kind a b c d e; do
  if [[ "$kind" == ERROR ]]; then
    echo "mutants list: $a" >&2
    status_parse=1
    continue
  fi
  if [[ ${#only[@]} -gt 0 ]] && ! printf '%s\n' "${only[@]}" | grep -qxF "$a"; then continue; fi
  ids+=("$a"); files+=("$b"); finds+=("$c"); repls+=("$d"); whys+=("$e")
done < <(parse)
if [[ $status_parse -ne 0 ]]; then
  echo "FAIL: fix scripts/mutants.txt (the code it names has moved or changed)" >&2
  exit 1
fi
[[ ${#ids[@]} -gt 0 ]] || { echo "no mutants selected" >&2; exit 2; }

# The copy: <work>/hived, with <work>/shared beside it so scenarios' ../shared paths work.
work=${HIVED_MUTATION_DIR:-$(mktemp -d /tmp/hived-mutation.XXXXXX)}
mkdir -p "$work/hived"
shared=${HIVED_SHARED_DIR:-$(realpath -m "$root/../shared")}
[[ -e "$work/shared" || ! -d "$shared" ]] || ln -s "$shared" "$work/shared"
src="$work/hived"
# Copy what differs (with a fresh mtime, so a reused copy rebuilds exactly what changed).
# Outside a git checkout (e.g. an exported release): every file but build/.
list_files() {
  if git -C "$root" rev-parse --show-toplevel >/dev/null 2>&1; then
    (cd "$root" && git ls-files -co --exclude-standard -z)
  else
    (cd "$root" && find . -path ./build -prune -o -type f -print0)
  fi
}
list_files | python3 -c '
import filecmp, os, shutil, sys
root, dest = sys.argv[1], sys.argv[2]
for rel in sys.stdin.buffer.read().decode().split("\0"):
    src, dst = os.path.join(root, rel), os.path.join(dest, rel)
    if not rel or not os.path.isfile(src):
        continue
    if os.path.isfile(dst) and filecmp.cmp(src, dst, shallow=False):
        continue
    os.makedirs(os.path.dirname(dst), exist_ok=True)
    shutil.copy(src, dst)
' "$root" "$src"
build="$src/build/mutation"
export CMAKE_CXX_COMPILER_LAUNCHER=${CMAKE_CXX_COMPILER_LAUNCHER:-$(command -v ccache || true)}
# Paths relative to the copy, as a dev build of the checkout is relative to it: cache hits.
export CCACHE_BASEDIR=$work CCACHE_NOHASHDIR=1
export HIVED_PROPERTY_SEEDS=${HIVED_PROPERTY_SEEDS:-3}
cleanup() {
  if [[ $keep -eq 0 && -z "${HIVED_MUTATION_DIR:-}" ]]; then rm -rf "$work"; fi
}
trap cleanup EXIT

# Test steps, cheapest first: "name|target|command" (run in the copy's root).
steps=(
  "scenarios|hived-sim|$build/sim/hived-sim scenario --skip-missing-config tests/scenarios/*.yaml"
  "unit_cellalloc|unit_cellalloc|$build/tests/unit/cellalloc/unit_cellalloc"
  "unit_scheduler|unit_scheduler|$build/tests/unit/scheduler/unit_scheduler"
  "unit_sharing|unit_sharing|$build/tests/unit/sharing/unit_sharing"
  "oracle_scheduler|oracle_scheduler|$build/tests/unit/scheduler_oracle/oracle_scheduler"
  "property_cellalloc|property_cellalloc|$build/tests/unit/cellalloc/property_cellalloc"
  "property_scheduler_api|property_scheduler_api|$build/tests/unit/scheduler_api/property_scheduler_api"
)

if [[ -n "${HIVED_MUTATION_STEPS:-}" ]]; then
  chosen=()
  for s in "${steps[@]}"; do
    IFS='|' read -r name _ _ <<<"$s"
    if grep -qwF -- "$name" <<<"$HIVED_MUTATION_STEPS"; then chosen+=("$s"); fi
  done
  [[ ${#chosen[@]} -gt 0 ]] || { echo "HIVED_MUTATION_STEPS names no step" >&2; exit 2; }
  steps=("${chosen[@]}")
fi

echo "copy: $src"
# The dev preset's flags (Debug, assertions, -Werror), so ccache reuses a dev build's objects.
(cd "$src" && cmake --preset dev -B "$build" -DHIVED_BUILD_BENCHMARKS=OFF) >"$work/configure.log" 2>&1 ||
  { echo "configure failed: $work/configure.log" >&2; keep=1; exit 2; }

# Runs the steps; prints the failing ones (the first only, unless --all), "" when all pass.
# A step that times out (10 minutes, e.g. a mutant that loops) fails.
run_tests() {
  local s name cmd out=""
  for s in "${steps[@]}"; do
    IFS='|' read -r name _ cmd <<<"$s"
    if ! (cd "$src" && timeout 600 bash -c "$cmd" >"$work/test.log" 2>&1) 2>/dev/null; then
      out="${out:+$out,}$name"
      [[ $all -eq 1 ]] || break
    fi
  done
  echo "$out"
}

# A tree without some test target (an older checkout) runs the steps it has.
known=$(ninja -C "$build" -t targets all 2>/dev/null | sed -n 's/^\([A-Za-z0-9_.-]*\): phony$/\1/p')
kept_steps=() targets=()
for s in "${steps[@]}"; do
  IFS='|' read -r name t _ <<<"$s"
  if grep -qxF "$t" <<<"$known"; then
    kept_steps+=("$s") targets+=("$t")
  else
    echo "no target $t in this tree: step $name skipped"
  fi
done
steps=("${kept_steps[@]}")

echo "baseline build and tests (unmutated copy)..."
if ! cmake --build "$build" -j2 --target "${targets[@]}" >"$work/build.log" 2>&1; then
  echo "the unmutated tree does not build: $work/build.log" >&2; keep=1; exit 2
fi
failed=$(run_tests)
if [[ -n "$failed" ]]; then
  echo "the unmutated tree fails $failed: $work/test.log" >&2; keep=1; exit 2
fi

survivors=0 broken=0
printf '%-32s %-9s %s\n' MUTANT RESULT "KILLED BY / NOTE"
for i in "${!ids[@]}"; do
  f="$src/${files[$i]}"
  cp -p "$f" "$work/original"
  python3 - "$f" "${finds[$i]}" "${repls[$i]}" <<'PY'
import sys
path, find, repl = sys.argv[1:]
text = open(path, encoding="utf-8").read()
open(path, "w", encoding="utf-8").write(text.replace(find, repl, 1))
PY
  start=$(date +%s)
  if ! cmake --build "$build" -j2 --target "${targets[@]}" >"$work/build.log" 2>&1; then
    cp "$work/build.log" "$work/build-${ids[$i]}.log"
    result="NO-BUILD" note="does not compile (fix its replacement): $work/build-${ids[$i]}.log"
    keep=1
    broken=$((broken + 1))
  else
    failed=$(run_tests)
    if [[ -n "$failed" ]]; then
      result="killed" note="$failed"
    else
      result="SURVIVED" note="${whys[$i]}"
      survivors=$((survivors + 1))
    fi
  fi
  printf '%-32s %-9s %s (%ss)\n' "${ids[$i]}" "$result" "$note" "$(($(date +%s) - start))"
  # Restore with a fresh mtime so the next build recompiles the file.
  cp "$work/original" "$f"
  touch "$f"
done
# Leave the build matching the unmutated sources (a reused HIVED_MUTATION_DIR stays valid).
cmake --build "$build" -j2 --target "${targets[@]}" >"$work/build.log" 2>&1 || true

echo "${#ids[@]} mutants: $((${#ids[@]} - survivors - broken)) killed, $survivors survived, $broken did not build"
[[ $keep -eq 1 ]] && echo "kept: $work"
[[ $survivors -eq 0 && $broken -eq 0 ]]
}

main "$@"

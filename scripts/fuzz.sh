#!/usr/bin/env bash
# Fuzzes decide with cargo-fuzz: each target of fuzz/ for SECONDS_PER_TARGET (default 600), one
# after the other, then prints the executions, speed and corpus size libFuzzer reported.
#
#   scripts/fuzz.sh [SECONDS_PER_TARGET]
#
# Environment: TARGETS="profile rules quotes folder validate" (which targets, in order), SANITIZER=address|none
# (default: address for profile, none for the rule-file targets, see fuzz/README.md),
# FUZZ_ARGS="..." (extra libFuzzer flags, e.g. "-fork=2 -ignore_crashes=1" to keep going).
# Not run by CI. See fuzz/README.md.
set -uo pipefail

secs="${1:-600}"
case "$secs" in
'' | *[!0-9]*) echo "usage: scripts/fuzz.sh [SECONDS_PER_TARGET]" >&2; exit 2 ;;
esac
root="$(cd "$(dirname "$0")/.." && pwd)"
cd "$root/fuzz" || exit 2

# The machine's toolchain is stable; cargo fuzz needs nightly flags (-Z sanitizer=...).
export RUSTC_BOOTSTRAP=1

if ! cargo fuzz --version >/dev/null 2>&1; then
    echo "installing cargo-fuzz" >&2
    cargo install cargo-fuzz --locked || cargo install cargo-fuzz || exit 2
fi

# Seconds one input may take before libFuzzer calls it a hang. `decide validate` on a whole
# policy runs the table analysis and the invariant search (about 60,000 evaluations, 4 s in a
# release build, several times that under coverage instrumentation), so its target gets more.
timeout_for() {
    case "$1" in
    validate) echo 120 ;;
    *) echo 10 ;;
    esac
}

max_len() {
    case "$1" in
    profile) echo 16384 ;;
    *) echo 65536 ;;
    esac
}

# The rule-file targets share the seeds of rules/.
seeds() {
    case "$1" in
    validate) echo rules ;;
    *) echo "$1" ;;
    esac
}

# decide and serde-saphyr forbid unsafe code, and ASan makes the allocation-heavy rule
# targets about 7 times slower (27 vs 187 executions a second for `rules`), so those run
# without it; the fast profile target keeps it for the dependencies' unsafe code.
sanitizer() {
    case "$1" in
    profile) echo "${SANITIZER:-address}" ;;
    *) echo "${SANITIZER:-none}" ;;
    esac
}

mkdir -p logs
status=0
summary=""
for target in ${TARGETS:-profile rules quotes folder validate}; do
    mkdir -p "corpus/$target" "artifacts/$target"
    # Seeds are committed; the working corpus grows here and is not.
    cp -n "seeds/$(seeds "$target")"/* "corpus/$target/" 2>/dev/null || true
    log="logs/$target.log"
    san="$(sanitizer "$target")"
    echo "== $target: ${secs}s, sanitizer $san, log in fuzz/$log" >&2
    start=$(date +%s)
    # shellcheck disable=SC2086 # FUZZ_ARGS is a list of flags
    nice -n 10 cargo fuzz run --sanitizer "$san" "$target" "corpus/$target" -- \
        -dict=yaml.dict \
        -max_len="$(max_len "$target")" \
        -rss_limit_mb=2048 \
        -timeout="$(timeout_for "$target")" \
        -max_total_time="$secs" \
        -print_final_stats=1 \
        ${FUZZ_ARGS:-} 2>&1 | tee "$log"
    rc=${PIPESTATUS[0]}
    wall=$(($(date +%s) - start))
    [ "$rc" -eq 0 ] || status=1
    execs=$(grep -o 'stat::number_of_executed_units: *[0-9]*' "$log" | tail -1 | grep -o '[0-9]*$')
    speed=$(grep -o 'stat::average_exec_per_sec: *[0-9]*' "$log" | tail -1 | grep -o '[0-9]*$')
    rss=$(grep -o 'stat::peak_rss_mb: *[0-9]*' "$log" | tail -1 | grep -o '[0-9]*$')
    last=$(grep -E '^#[0-9]+' "$log" | tail -1)
    found=$(ls "artifacts/$target" 2>/dev/null | wc -l)
    summary+="$target ($san): exit $rc, wall ${wall}s, executions ${execs:-?}, exec/s ${speed:-?}, peak RSS ${rss:-?} MB, corpus files $(ls "corpus/$target" | wc -l), artifacts ${found}"$'\n'
    summary+="  last status line: ${last:-none}"$'\n'
done

echo
echo "== summary"
printf '%s' "$summary"
if [ "$status" -ne 0 ]; then
    echo "a target stopped on a crash, timeout or OOM: see fuzz/artifacts/ and the logs" >&2
fi
exit "$status"

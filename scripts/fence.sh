#!/usr/bin/env bash
# The differential fence of a change to the engine: two builds of `decide` decide the same
# generated profiles, and their records and memos are compared byte for byte.
#
#   scripts/fence.sh OLD_DECIDE NEW_DECIDE [COUNT] [MEMOS] [AS_OF]
#
# NEW_DECIDE writes COUNT profiles (default 100000) with `decide rules sample`; both binaries
# decide them with `decide batch` as JSON records, in English and in Chinese, and the first MEMOS
# of them (default 1000) as Markdown memos, in English and in Chinese (one file each, in --out
# folders; a memo carries the sensitivity analysis, about 50 ms a profile). Prints the sha256 of
# each output for each binary and exits 1 if any differs. Each binary's policy revision is
# replaced by `REVISION` before hashing, so a change of the rules that decides the same is shown
# identical (the revision is a hash of the rules' text). The records of 100,000 profiles take
# about 2.7 GB under $TMPDIR and the run about 10 minutes on 2 cores. Where the records differ, the
# first profile whose record differs is printed with both records' difference (`diff -u` of
# the pretty-printed JSON), so a fence that fails says where to look.
#
# NAMED_FIX (optional) is a sed script applied to both sides' outputs before they are hashed:
# the one change the note of the work names (e.g. NAMED_FIX='s/） = /）= /g'), so the rest is
# still held byte for byte. NAMED_FIX_CMD (optional) is a command both sides are piped through
# as well, for a fix sed cannot say (e.g. a Perl one-liner over Unicode classes).
set -euo pipefail
old=$(realpath "$1")
new=$(realpath "$2")
count=${3:-100000}
memos=${4:-1000}
as_of=${5:-2026-09-04}
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
"$new" rules sample --count "$count" --as-of "$as_of" > "$work/sample.jsonl"
head -n "$memos" "$work/sample.jsonl" > "$work/memos.jsonl"
echo "sample: $count profiles, sha256 $(sha256sum < "$work/sample.jsonl" | cut -c1-64)"
status=0
# The outputs of binary $1 with its policy revision masked (standard input to output).
masked() {
    local revision
    revision=$(head -n 1 "$work/sample.jsonl" > "$work/one.jsonl" \
        && "$1" batch "$work/one.jsonl" --as-of "$as_of" 2> /dev/null | grep -o '"revision":"sha256:[0-9a-f]*"' | head -1 | cut -d'"' -f4)
    sed -e "s/$revision/REVISION/g" -e "${NAMED_FIX:-}" | ${NAMED_FIX_CMD:-cat}
}
hashes() {
    local bin=$1 side=$2
    "$bin" batch "$work/sample.jsonl" --as-of "$as_of" > "$work/$side.en.jsonl" 2> /dev/null || true
    "$bin" batch "$work/sample.jsonl" --as-of "$as_of" --lang zh > "$work/$side.zh.jsonl" 2> /dev/null || true
    "$bin" batch "$work/memos.jsonl" --as-of "$as_of" --format md --out "$work/$side.md" 2> /dev/null || true
    "$bin" batch "$work/memos.jsonl" --as-of "$as_of" --format md --lang zh --out "$work/$side.zh.md" 2> /dev/null || true
    echo "records en $(masked "$bin" < "$work/$side.en.jsonl" | sha256sum | cut -c1-64)"
    # One checksum a record, to find the first that differs.
    masked "$bin" < "$work/$side.en.jsonl" | perl -MDigest::MD5=md5_hex -ne 'print md5_hex($_), "\n"' > "$work/$side.lines"
    echo "records zh $(masked "$bin" < "$work/$side.zh.jsonl" | sha256sum | cut -c1-64)"
    for memo in md zh.md; do
        echo "memos $memo $(cd "$work/$side.$memo" && find . -type f | LC_ALL=C sort | xargs cat | masked "$bin" | sha256sum | cut -c1-64) ($(find "$work/$side.$memo" -type f | wc -l) files)"
    done
    echo "errors     $(grep -c '"error"' "$work/$side.en.jsonl" || true) of $(wc -l < "$work/$side.en.jsonl") records"
    rm -rf "$work/$side.md" "$work/$side.zh.md" "$work/$side.en.jsonl" "$work/$side.zh.jsonl"
}
hashes "$old" old > "$work/old.txt"
hashes "$new" new > "$work/new.txt"
echo "old ($old):"; cat "$work/old.txt"
echo "new ($new):"; cat "$work/new.txt"
if cmp -s "$work/old.txt" "$work/new.txt"; then
    echo "identical"
else
    echo "DIFFERENT"
    status=1
    first=$(cmp "$work/old.lines" "$work/new.lines" 2> /dev/null | grep -o 'line [0-9]*' | cut -d' ' -f2 || true)
    if [ -n "$first" ]; then
        echo "first differing record: profile $first of the sample"
        sed -n "${first}p" "$work/sample.jsonl" > "$work/first.jsonl"
        cat "$work/first.jsonl"
        for side in old new; do
            bin=$old
            [ "$side" = new ] && bin=$new
            "$bin" batch "$work/first.jsonl" --as-of "$as_of" 2> /dev/null | masked "$bin" \
                | python3 -m json.tool > "$work/first.$side.json" || true
        done
        diff -u "$work/first.old.json" "$work/first.new.json" | head -n 60 || true
    fi
fi
exit $status

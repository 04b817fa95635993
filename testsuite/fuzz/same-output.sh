#!/bin/bash
# An afc that runs two compilers on the same arguments and logs where they
# differ (exit status, standard output and error, the bytes of the output
# file): set AFC to this script and the differential tester checks the
# first compiler's results while every call it makes compares the second's
# (docs/testing.md, "Campaigns"). How a change that should not alter any
# object (a diagnostic's rendering, a refactoring) is shown not to: the
# programs checked on the old compiler then count for the new one.
#
#   AFC_USED=new/afc AFC_COMPARED=old/afc SAME_OUTPUT_LOG=diff.log \
#     AFC=testsuite/fuzz/same-output.sh testsuite/fuzz/difftest.py --seed S …
#
# The log gets a line per call ("same ARGS" or "DIFF …"); `grep -c DIFF`.
set -u
used=${AFC_USED:?the compiler whose results are used} compared=${AFC_COMPARED:?the compiler compared with it}
log=${SAME_OUTPUT_LOG:?the log of every call}
args=("$@") alt=("$@") out=""
for ((i = 0; i + 1 < ${#args[@]}; i++)); do
    if [ "${args[$i]}" = -o ]; then out=${args[$((i + 1))]}; alt[$((i + 1))]="$out.compared"; fi
done
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
"$used" "${args[@]}" >"$tmp/out1" 2>"$tmp/err1"; rc1=$?
"$compared" "${alt[@]}" >"$tmp/out2" 2>"$tmp/err2"; rc2=$?
# The second compiler's messages name its own output file.
[ -n "$out" ] && sed -i "s|$out.compared|$out|g" "$tmp/err2"
same=1
[ $rc1 = $rc2 ] && cmp -s "$tmp/out1" "$tmp/out2" && cmp -s "$tmp/err1" "$tmp/err2" || same=0
if [ -n "$out" ] && [ "$out" != - ]; then
    if [ -e "$out" ] || [ -e "$out.compared" ]; then cmp -s "$out" "$out.compared" || same=0; fi
    rm -f "$out.compared"
fi
if [ $same = 1 ]; then echo "same $*" >>"$log"; else echo "DIFF (status $rc1, $rc2) $*" >>"$log"; fi
cat "$tmp/out1"
cat "$tmp/err1" >&2
exit $rc1

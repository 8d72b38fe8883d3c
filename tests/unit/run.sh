#!/bin/sh
# Run the unit test binaries given as arguments and total their results.
# Each binary prints "PASS: name" or "FAIL: name ..." per test; a binary
# that crashes or exits non-zero without reporting a failure counts as one
# more failure.  The last line is always "N passed, N failed", and the exit
# status is non-zero when anything failed.
passed=0
failed=0
for bin in "$@"; do
    out=$("$bin" 2>&1)
    rc=$?
    printf '%s\n' "$out"
    p=$(printf '%s\n' "$out" | grep -c '^PASS: ')
    f=$(printf '%s\n' "$out" | grep -c '^FAIL: ')
    if [ "$rc" -ne 0 ] && [ "$f" -eq 0 ]; then
        echo "FAIL: $(basename "$bin") exited with status $rc"
        f=1
    fi
    passed=$((passed + p))
    failed=$((failed + f))
done
echo "$passed passed, $failed failed"
[ "$failed" -eq 0 ]

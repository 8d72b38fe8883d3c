# sh_calls: busybox applets on the calls of the calls engineer's part:
# touch -d/-t/-r (utimensat), cp and cat of a large file (sendfile),
# sleep and timeout (timed sleeps, a signal ending one), and a sleeping
# process using no CPU time (time's user and system figures).
# Ends with "N passed, N failed".

. "$(dirname "$0")/ut.inc"
ut_begin sh_calls
export TZ=UTC0

# File times.
touch -d '2001-02-03 04:05:06' f
eq "touch -d" "$(date -d '2001-02-03 04:05:06' +%s)" "$(stat -c %Y f)"
eq "touch -d sets atime too" "$(stat -c %Y f)" "$(stat -c %X f)"
touch -t 199912312359.58 g
eq "touch -t" "$(date -d '1999-12-31 23:59:58' +%s)" "$(stat -c %Y g)"
touch -r f h
eq "touch -r" "$(stat -c '%X %Y' f)" "$(stat -c '%X %Y' h)"
ok "touch -c makes nothing" touch -c nothing
ok "touch -c made nothing" not test -e nothing
before=$(date +%s)
touch g
now=$(stat -c %Y g)
ok "touch: now" test "$now" -ge "$before"

# A large copy: busybox copies with sendfile.
seq 1 60000 > big
ok "cp" cp big big2
ok "cp: the same bytes" cmp -s big big2
cat big > big3
ok "cat: the same bytes" cmp -s big big3
eq "cp: the same size" "$(wc -c < big)" "$(wc -c < big2)"

# Timed sleeps.
t0=$(date +%s)
sleep 1
t1=$(date +%s)
ok "sleep 1 lasts a second" test $((t1 - t0)) -ge 1
timeout 1 sleep 30
eq "timeout kills with SIGTERM" 143 "$?"
t2=$(date +%s)
ok "timeout waited its second" test $((t2 - t1)) -ge 1
ok "timeout did not wait for the sleep" test $((t2 - t1)) -lt 30
usleep 20000
ok "usleep" true

# Sleeping costs no CPU time: time's user and system seconds stay near 0.
time -p sleep 1 2> times
user=$(sed -n 's/^user //p' times)
sys=$(sed -n 's/^sys //p' times)
ok "time printed user and sys" test -n "$user" -a -n "$sys"
ok "a sleeping process uses no CPU" test "${user%%.*}" -eq 0 -a "${sys%%.*}" -eq 0

ut_end

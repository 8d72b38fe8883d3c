# sh_procps: busybox's process and system tools on /proc and the system
# calls behind them: ps, pidof, killall, top -b, uptime, free, df, mount,
# dmesg.  Run as `busybox sh sh_procps.sh` (its applets run as themselves,
# so the host's Linux runs the same tools); prints one line per failure and
# ends with "N passed, N failed".

. "$(dirname "$0")/ut.inc"
ut_begin sh_procps

# A process of our own with a name nobody else uses: a script whose name
# is its command name.
name=utsp$$
printf '#!/bin/sh\nwhile :; do sleep 1; done\n' > "$name"
chmod +x "$name"
"./$name" &
spinner=$!
i=0
while [ $i -lt 50 ] && ! grep -q "$name" /proc/$spinner/comm 2>/dev/null; do
	sleep 0.1; i=$((i + 1))
done

eq "ps lists the shell" 1 "$(ps | awk -v p=$$ '$1 == p' | wc -l)"
eq "ps lists the spinner" 1 "$(ps | awk -v p=$spinner '$1 == p' | wc -l)"
eq "pidof finds it" "$spinner" "$(pidof "$name")"
top_out=$(top -b -n 1)
ok "top has the load line" test -n "$(echo "$top_out" | grep '^Load average:')"
ok "top lists the spinner" test -n "$(echo "$top_out" | awk -v p=$spinner '$1 == p')"
ok "killall kills it" killall "$name"
wait $spinner
eq "killed by SIGTERM" 143 "$?"
ok "pidof finds it no more" not pidof "$name"

up=$(uptime)
ok "uptime: up" test -n "$(echo "$up" | grep ' up ')"
ok "uptime: load average" test -n "$(echo "$up" | grep 'load average: [0-9]*\.[0-9][0-9], ')"

mem_total=$(awk '/^MemTotal:/ { print $2 }' /proc/meminfo)
eq "free's total is meminfo's" "$mem_total" "$(free | awk '/^Mem:/ { print $2 }')"

eq "df lists /" 1 "$(df / | awk '$NF == "/"' | wc -l)"
ok "df's sizes are numbers" test "$(df / | awk '$NF == "/" { print $2 }')" -gt 0
ok "mount lists /proc" test -n "$(mount | grep ' on /proc type proc ')"
ok "mtab is mounts" test -n "$(grep ' /proc proc ' /etc/mtab)"
ok "dmesg prints the log" test "$(dmesg | wc -l)" -gt 0

ut_end

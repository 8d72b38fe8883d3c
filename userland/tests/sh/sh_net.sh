# sh_net: busybox's network tools over loopback: ping (a raw ICMP
# socket, root only), ip and ifconfig (netlink, the interface ioctls and
# /proc/net/dev), nc (TCP both ways), netstat and /proc/net/tcp.  Run as
# `busybox sh sh_net.sh` (its applets run as themselves, so the host's
# Linux runs the same tools); prints one line per failure and ends with
# "N passed, N failed".

. "$(dirname "$0")/ut.inc"
ut_begin sh_net

# ping: three echo requests answered by the kernel.
if [ "$(id -u)" = 0 ]; then
	out=$(ping -c 3 -W 5 127.0.0.1 2>&1)
	eq "ping's status" 0 "$?"
	ok "ping got three replies" test -n "$(echo "$out" | grep '3 packets transmitted, 3 packets received')"
	eq "ping localhost" 0 "$(ping -c 1 -W 5 localhost >/dev/null 2>&1; echo $?)"
	out=$(ping -c 1 -s 1400 -W 5 127.0.0.1 2>&1)
	ok "a 1400-byte ping" test -n "$(echo "$out" | grep '1408 bytes from 127.0.0.1')"
else
	echo "note: ping skipped (raw sockets need root)"
fi

# ip and ifconfig: the loopback interface as Linux shows it.
out=$(ip -4 addr show lo)
ok "ip addr: 127.0.0.1/8" test -n "$(echo "$out" | grep 'inet 127.0.0.1/8 scope host lo')"
out=$(ip link show lo)
ok "ip link: lo up" test -n "$(echo "$out" | grep 'lo: <LOOPBACK,UP,LOWER_UP> mtu 65536')"
ok "ip link: loopback" test -n "$(echo "$out" | grep 'link/loopback 00:00:00:00:00:00')"
out=$(ifconfig lo)
ok "ifconfig lo: address" test -n "$(echo "$out" | grep 'inet addr:127.0.0.1  Mask:255.0.0.0')"
ok "ifconfig lo: flags" test -n "$(echo "$out" | grep 'UP LOOPBACK RUNNING  MTU:65536')"
ok "ifconfig lists lo" test -n "$(ifconfig | grep '^lo ')"
ok "/proc/net/dev has lo" test -n "$(grep '^ *lo:' /proc/net/dev)"
rx1=$(awk '$1 == "lo:" { print $3 }' /proc/net/dev)

# nc: a listener, a line each way, and the listener in /proc/net/tcp.
port=$((20000 + $$ % 20000))
hexport=$(printf '%04X' $port)
# Each side's line comes from a file, not a pipe: a file is readable at the
# first select, so nc sends its line before it can read the other side's end
# of file and exit (from a pipe, a slow echo let the client take the
# server's "hello" and end of file first and quit without sending "world").
echo hello > hello.txt
echo world > world.txt
nc -l -p $port < hello.txt > got 2>/dev/null &
server=$!
i=0
# (the host's nc listens on IPv6's wildcard, which Linux lists in tcp6)
listening() { cat /proc/net/tcp /proc/net/tcp6 2>/dev/null | grep -Eq ":$hexport 0+:0000 0A"; }
while [ $i -lt 50 ] && ! listening; do
	sleep 0.1; i=$((i + 1))
done
ok "/proc/net/tcp lists the listener" listening
ok "netstat -ltn lists it" test -n "$(netstat -ltn 2>/dev/null | grep ":$port ")"
eq "nc client hears the server" hello "$(nc -w 5 127.0.0.1 $port < world.txt)"
wait $server
eq "nc server's status" 0 "$?"
eq "nc server hears the client" world "$(cat got)"
rx2=$(awk '$1 == "lo:" { print $3 }' /proc/net/dev)
ok "lo counted the packets" test "$rx2" -gt "$rx1"

# Nobody listens: refused at once.
eq "a closed port refuses" 1 "$(echo x | nc -w 5 127.0.0.1 $((port + 1)) >/dev/null 2>&1; echo $?)"

ut_end

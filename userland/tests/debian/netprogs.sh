# netprogs.sh: Debian's network servers and clients over loopback, run by
# bash inside Tempest and on the Linux peer (tests/netprogs_check.py).
# Each check prints "ok NAME" or "fail NAME: what"; figures print
# "figure NAME VALUE" (shown, not judged); the end prints "netprogs-end".

# ok, fail, check, eqv and await_port: checks.inc, put in front.
# The peer's minimal boot leaves loopback down; Tempest's is always up.
ip link set lo up 2> /dev/null
W=$(mktemp -d /tmp/np.XXXXXX)
chmod 755 "$W"          # nginx's workers run as nobody
cd "$W" || exit 1

# ---- redis: a key-value server, its client and its benchmark ----
redis-server --port 6379 --bind 127.0.0.1 --save '' --appendonly no \
	--daemonize no > redis.log 2>&1 &
redis=$!
check redis/start await_port 6379
eqv redis/ping PONG "$(timeout 30 redis-cli -h 127.0.0.1 ping)"
eqv redis/set OK "$(timeout 30 redis-cli -h 127.0.0.1 set greeting hello)"
eqv redis/get hello "$(timeout 30 redis-cli -h 127.0.0.1 get greeting)"
timeout 30 redis-cli -h 127.0.0.1 del n > /dev/null
for i in $(seq 1 20); do timeout 30 redis-cli -h 127.0.0.1 incr n > /dev/null; done
eqv redis/incr 20 "$(timeout 30 redis-cli -h 127.0.0.1 get n)"
# The benchmark runs in the background so that, should it not finish in
# 120 s, the connections to redis are seen as they stand (local, remote,
# state, send:receive queues) before it is stopped.
redis-benchmark -h 127.0.0.1 -q -n 2000 -c 4 -t set,get > bench.out 2>&1 &
bench_pid=$!
conns=""
for i in $(seq 1 600); do kill -0 $bench_pid 2> /dev/null || break; sleep 0.2; done
if kill -0 $bench_pid 2> /dev/null; then
	conns=$(awk '$2 ~ /:18EB$/ || $3 ~ /:18EB$/ { printf "%s>%s st%s q%s; ", $2, $3, $4, $5 }' /proc/net/tcp)
	conns="still running after 120 s; tcp: $conns redis-server: $(cut -d' ' -f3 /proc/$redis/stat)"
	kill $bench_pid
fi
wait $bench_pid 2> /dev/null
bench=$(tr '\r' '\n' < bench.out)
set_rps=$(echo "$bench" | sed -n 's/^SET: \([0-9.]*\) requests per second.*/\1/p' | tail -1)
get_rps=$(echo "$bench" | sed -n 's/^GET: \([0-9.]*\) requests per second.*/\1/p' | tail -1)
if [ -n "$set_rps" ] && [ -n "$get_rps" ]; then ok redis/benchmark
else fail redis/benchmark "$(echo "$bench" | grep -v '^ *$' | tail -3 | tr '\n' '|') $conns"; fi
echo "figure redis-set-rps ${set_rps:-none}"
echo "figure redis-get-rps ${get_rps:-none}"
timeout 30 redis-cli -h 127.0.0.1 shutdown nosave > /dev/null 2>&1
wait $redis
eqv redis/exit 0 "$?"

# ---- memcached: its text protocol through bash's /dev/tcp ----
memcached -u nobody -l 127.0.0.1 -p 11211 -U 0 > mc.log 2>&1 &
mc=$!
check memcached/start await_port 11211
printf 'set k 0 0 5\r\nhello\r\nget k\r\nset n 0 0 1\r\n7\r\nincr n 5\r\nquit\r\n' > mc.req
reply=$(timeout 30 bash -c 'exec 3<>/dev/tcp/127.0.0.1/11211; cat mc.req >&3; tr -d "\r" <&3 | tr "\n" " "')
eqv memcached/protocol "STORED VALUE k 0 5 hello END STORED 12 " "$reply"
kill $mc
wait $mc 2> /dev/null

# ---- nginx (a master and two workers) and curl ----
mkdir -p www ng
echo "tempest page" > www/index.html
head -c 300000 /dev/urandom > www/big.bin
nginx_conf 127.0.0.1:8080
nginx -c "$W/nginx.conf" &
nginx=$!
check nginx/start await_port 8080
# (their title, which nginx writes over its arguments, in /proc/PID/cmdline)
count_workers() { cat /proc/[0-9]*/cmdline 2>/dev/null | tr '\0' '\n' | grep -c '^nginx: worker process$'; }
for i in $(seq 1 50); do [ "$(count_workers)" -ge 2 ] && break; sleep 0.2; done
workers=$(count_workers)
eqv nginx/workers 2 "$workers"
eqv curl/page "tempest page" "$(curl -s --max-time 20 http://127.0.0.1:8080/)"
curl -s --max-time 20 -o got.bin http://127.0.0.1:8080/big.bin
check curl/big cmp got.bin www/big.bin
eqv curl/404 404 "$(curl -s --max-time 20 -o /dev/null -w '%{http_code}' http://127.0.0.1:8080/nope)"
eqv nginx/log 3 "$(wc -l < ng/access.log)"
kill -QUIT $nginx
wait $nginx
eqv nginx/exit 0 "$?"

# ---- iperf3: TCP and UDP over loopback ----
iperf3 -s -1 -B 127.0.0.1 -p 5201 > iperf-s.log 2>&1 &
srv=$!
check iperf3/start await_port 5201
out=$(timeout 60 iperf3 -c 127.0.0.1 -p 5201 -t 2 -f m 2>&1)
tcp=$(echo "$out" | awk '/receiver/ { print $7 }')
[ -n "$tcp" ] && ok iperf3/tcp || fail iperf3/tcp "$(echo "$out" | tail -3 | tr '\n' '|')"
echo "figure iperf3-tcp-mbit ${tcp:-none}"
wait $srv
iperf3 -s -1 -B 127.0.0.1 -p 5202 > iperf-u.log 2>&1 &
srv=$!
check iperf3/start-udp await_port 5202
out=$(timeout 60 iperf3 -c 127.0.0.1 -p 5202 -u -b 5M -t 2 -f m 2>&1)
udp=$(echo "$out" | awk '/receiver/ { print $7 }')
[ -n "$udp" ] && ok iperf3/udp || fail iperf3/udp "$(echo "$out" | tail -3 | tr '\n' '|')"
echo "figure iperf3-udp-mbit ${udp:-none}"
wait $srv

cd / && rm -rf "$W"
echo netprogs-end

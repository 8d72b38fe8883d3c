"""redis as a network workload (issue 35): Debian's redis-server and
redis-benchmark, unmodified, over loopback in the Debian root, on Tempest
and on the Linux peer alike, run by the macro kind (tools/harness/macro.py).

  redis   redis-server started by the point's setup (no persistence, bound
          to 127.0.0.1), then redis-benchmark's SET and GET tests with two
          clients per processor, REQUESTS_PER_S x the point's seconds
          requests each, no pipelining: every request a loopback TCP round
          trip through the socket layer, the TCP/IP stack and epoll.
          One line, "bench redis ops_per_s=R set_per_s=S get_per_s=G
          clients=C requests=N" (higher is better; R is the mean of the
          two rates redis-benchmark printed), or "bench redis error=..."
          and status 1.  On Tempest the command runs under lockstat, so
          the point carries the network path's lock statistics.

The setup brings the loopback interface up first (the Linux peer's init
leaves it down) and waits, bounded, for redis-server's PONG.
"""

from .macro_sysbench import seconds_of   # the point's seconds, at least 1

PORT = 6379
REQUESTS_PER_S = 1000
LOOPBACK_UP = "(ip link set lo up || busybox ip link set lo up) 2>/dev/null"

SERVER = ("redis-server --port %(port)d --bind 127.0.0.1 --save '' --appendonly no "
          "--daemonize yes --logfile %(log)s")
# Up to 20 s for the server's PONG.
AWAIT = ("i=0; until redis-cli -h 127.0.0.1 -p %(port)d ping 2>/dev/null | grep -q PONG; do "
         "i=$((i+1)); if [ $i -gt 100 ]; then tail -5 %(log)s; exit 1; fi; sleep 0.2; done")

# redis-benchmark -q prints "SET: 1234.56 requests per second, p50=..." (and
# progress lines ending in carriage returns, dropped here).
PARSE = r"""tr '\r' '\n' < %(out)s | awk -v c=%(clients)d -v n=%(requests)d '
/^SET: [0-9.]+ requests per second/ { set = $2 + 0 }
/^GET: [0-9.]+ requests per second/ { get = $2 + 0 }
END {
    if (set <= 0 || get <= 0) { print "bench redis error=no_rate"; exit 1 }
    printf "bench redis ops_per_s=%%.2f set_per_s=%%.2f get_per_s=%%.2f clients=%%d requests=%%d\n", (set + get) / 2, set, get, c, n
}'"""


def setup(port=PORT, log="/tmp/redis.log"):
    """Shell lines: loopback up, the server started, its PONG awaited."""
    values = {"port": port, "log": log}
    return "%s; %s && %s" % (LOOPBACK_UP, SERVER % values, AWAIT % values)


def command(point, port=PORT, out="/tmp/redis.out"):
    """The timed command: the benchmark, the server shut down, the line."""
    clients = 2 * point["cpus"]
    requests = REQUESTS_PER_S * seconds_of(point)
    run = "redis-benchmark -h 127.0.0.1 -p %d -q -n %d -c %d -t set,get > %s 2>&1" % (
        port, requests, clients, out)
    stop = "redis-cli -h 127.0.0.1 -p %d shutdown nosave > /dev/null 2>&1" % port
    parse = PARSE % {"out": out, "clients": clients, "requests": requests}
    return ("%s; st=$?; %s\n"
            "if [ $st -ne 0 ]; then echo \"bench redis error=redis_benchmark_status_$st\"; "
            "tail -5 %s; exit 1; fi\n%s\n" % (run, stop, out, parse))


def prepare(tmp, point):
    """The redis point: no disk, the server in its setup, the benchmark."""
    return {"disks": [], "users": [], "setup": setup(), "command": command(point)}


PREPARE = {"redis": prepare}

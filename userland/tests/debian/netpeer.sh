# netpeer.sh: Tempest and the Linux peer on the peer segment (NET=peer),
# Debian's programs on both ends (tests/netpeer_check.py, issue 35).
# The harness puts "ROLE=tempest" or "ROLE=peer" in front of this text:
# Tempest (10.0.3.1, from ip=) runs it under init on its Debian root, the
# peer (10.0.3.2, set here) chrooted in the same tree on ext4.
#
# How the two ends meet, every wait bounded:
#   Tempest  pings the peer until it answers (60 s at most), judges three
#            pings, then starts nginx-light (port 80) and an iperf3
#            server (port 5201), then waits (180 s at most) for the
#            peer's end marker, a request for /peer-done in nginx's
#            access log, and stops its servers.
#   peer     sets its address, pings Tempest until it answers (120 s at
#            most; without an answer the rest fail at once, skipped),
#            judges three pings, waits for nginx's answer (90 s at
#            most), then: curl of a page, of a 300 KB file checked
#            against Tempest's own sha256 of it, and of a missing page
#            (404); iperf3 for 2 s each over TCP, TCP reversed (-R), UDP
#            and UDP reversed; then GET /peer-done, and powers off.
# Each check prints "ok NAME" or "fail NAME: what"; figures print "figure
# NAME VALUE" (shown, not judged); each end's last line is
# "netpeer-end ROLE".

TEMPEST=10.0.3.1
PEER=10.0.3.2
# ok, fail, check, eqv and await_port: checks.inc, put in front.
# Ping $1 until it answers, for $2 seconds at most.
await_ping() {
	local end=$(($(date +%s) + $2))
	while [ "$(date +%s)" -lt $end ]; do
		busybox ping -c 1 -W 1 "$1" > /dev/null 2>&1 && return 0
		sleep 0.2
	done
	return 1
}
# Three pings of $1, judged as $2 (every one answered); the average
# round trip as figure $3.
ping3() {
	local out
	out=$(busybox ping -c 3 -W 2 "$1" 2>&1)
	if echo "$out" | grep -q '3 packets transmitted, 3 packets received'; then ok "$2"
	else fail "$2" "$(echo "$out" | tail -2 | tr '\n' '|')"; fi
	echo "figure $3 $(echo "$out" | sed -n 's|.*min/avg/max = [0-9.]*/\([0-9.]*\)/.*|\1|p')"
}
# iperf3 to Tempest for 2 s: NAME then iperf3's options; the receiver's
# Mbit/s as figure NAME (and, for UDP, its loss).
iperf() {
	local name=$1 out rate loss
	shift
	out=$(timeout 40 iperf3 -c $TEMPEST -p 5201 -t 2 -f m --connect-timeout 10000 "$@" 2>&1)
	rate=$(echo "$out" | awk '/receiver/ { print $7 }' | tail -1)
	loss=$(echo "$out" | sed -n 's/.*(\([0-9.e+-]*\)%) *receiver$/\1/p' | tail -1)
	if [ -z "$rate" ]; then
		fail "$name" "$(echo "$out" | tail -3 | tr '\n' '|')"
	elif [ -n "$loss" ] && [ "${loss%%.*}" -ge 100 ]; then
		fail "$name" "every datagram lost"
	else
		ok "$name"
	fi
	echo "figure $name-mbit ${rate:-none}"
	[ -z "$loss" ] || echo "figure $name-loss-pct $loss"
	sleep 1         # the server's next test starts afresh
}

tempest_side() {
	W=$(mktemp -d /tmp/np.XXXXXX)
	chmod 755 "$W"          # nginx's workers run as nobody
	cd "$W" || exit 1
	# The peer first (before the servers, so its tests do not meet our pings).
	if await_ping $PEER 60; then ping3 $PEER ping/peer ping-peer-ms
	else fail ping/peer "no answer from $PEER in 60 s"; fi
	mkdir -p www ng
	echo "tempest page" > www/index.html
	head -c 300000 /dev/urandom > www/big.bin
	(cd www && sha256sum big.bin > big.sha256)
	nginx_conf 80
	nginx -c "$W/nginx.conf" &
	nginx=$!
	check nginx/start await_port 80 00000000
	iperf3 -s -4 -p 5201 > iperf-s.log 2>&1 &   # -4: Tempest has no IPv6 socket to fall back from
	srv=$!
	check iperf3/start await_port 5201 00000000
	echo "netpeer: servers up"
	marker=""
	end=$(($(date +%s) + 180))
	while [ "$(date +%s)" -lt $end ]; do
		grep -q 'GET /peer-done' ng/access.log 2> /dev/null && { marker=1; break; }
		sleep 0.5
	done
	if [ -n "$marker" ]; then ok peer/done
	else fail peer/done "no GET /peer-done from the peer in 180 s (access log: $(wc -l < ng/access.log) lines)"; fi
	# Every request the peer judged is in the log, answered as it expected.
	if grep -q '"GET /big.bin HTTP/1.1" 200 300000 ' ng/access.log; then ok nginx/log
	else fail nginx/log "no 200 of 300000 bytes for big.bin: $(tail -3 ng/access.log | tr '\n' '|')"; fi
	kill $srv 2> /dev/null
	wait $srv 2> /dev/null
	kill -QUIT $nginx
	wait $nginx
	eqv nginx/exit 0 "$?"
	cd / && rm -rf "$W"
}

peer_side() {
	local dev page end c
	dev=$(ls /sys/class/net | grep -v '^lo$' | head -1)
	busybox ip link set lo up
	if [ -n "$dev" ] && busybox ip link set "$dev" up &&
		busybox ip addr add $PEER/24 dev "$dev"; then ok peer/address
	else fail peer/address "no network device, or ip failed (devices: $(ls /sys/class/net | tr '\n' ' '))"; fi
	if await_ping $TEMPEST 120; then ping3 $TEMPEST ping/tempest ping-tempest-ms
	else
		fail ping/tempest "no answer from $TEMPEST in 120 s"
		for c in curl/page curl/big curl/404 iperf3/tcp iperf3/tcp-reverse iperf3/udp \
			iperf3/udp-reverse; do fail $c "skipped: Tempest never answered ping"; done
		return
	fi
	page=""
	end=$(($(date +%s) + 90))
	while [ "$(date +%s)" -lt $end ]; do
		page=$(curl -s --max-time 5 http://$TEMPEST/) && [ -n "$page" ] && break
		sleep 1
	done
	eqv curl/page "tempest page" "$page"
	cd /tmp || exit 1
	curl -s --max-time 30 -o big.bin http://$TEMPEST/big.bin
	curl -s --max-time 30 -o big.sha256 http://$TEMPEST/big.sha256
	if sha256sum -c big.sha256 > /dev/null 2>&1 && [ "$(wc -c < big.bin)" = 300000 ]; then
		ok curl/big
	else
		fail curl/big "$(wc -c < big.bin 2> /dev/null) bytes, sha256 $(sha256sum big.bin | cut -c1-16) against Tempest's $(cut -c1-16 big.sha256 2> /dev/null)"
	fi
	eqv curl/404 404 "$(curl -s --max-time 20 -o /dev/null -w '%{http_code}' http://$TEMPEST/nope)"
	iperf iperf3/tcp
	iperf iperf3/tcp-reverse -R
	iperf iperf3/udp -u -b 10M
	iperf iperf3/udp-reverse -u -b 10M -R
	curl -s --max-time 20 -o /dev/null http://$TEMPEST/peer-done
}

case $ROLE in
tempest) tempest_side ;;
peer) peer_side ;;
*) echo "fail netpeer/role: ROLE is '$ROLE', not tempest or peer" ;;
esac
echo "netpeer-end $ROLE"

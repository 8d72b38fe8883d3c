# sh_users: users as a person meets them: busybox su, id, a private file,
# chroot and nice.  The image's accounts (user01, user02, the password
# "tempest", the set-user-id /bin/su) are checked where they exist, that
# is in Tempest; elsewhere only root and nobody are used.  Ends with
# "N passed, N failed".

. "$(dirname "$0")/ut.inc"
ut_begin sh_users
bb=/bin/busybox

if [ "$(id -u)" != 0 ]; then
	echo "note: not root, su skipped"
	ut_end
	exit $?
fi
chmod 755 "$T"

# nobody, through busybox su with a shell (the host's nobody has none).
eq "su nobody" "65534" "$($bb su -s /bin/sh nobody -c 'id -u')"
eq "su keeps root's own ids" "0" "$(id -u)"
echo secret > private
chmod 600 private
ok "nobody cannot read a 0600 file" not $bb su -s /bin/sh nobody -c "cat $T/private" 2>/dev/null
ok "nobody cannot write a root directory" not $bb su -s /bin/sh nobody -c "touch $T/new" 2>/dev/null
ok "root reads its file" test "$(cat private)" = secret

# renice (busybox has no nice applet): root may lower a value, nobody not.
$bb sleep 30 &
sleeper=$!
ok "renice +5" $bb renice -n 5 -p $sleeper >/dev/null
ok "root lowers it again" $bb renice -n -5 -p $sleeper >/dev/null
ok "nobody cannot renice root's process" not $bb su -s /bin/sh nobody -c "$bb renice -n 10 -p $sleeper" >/dev/null 2>&1
kill $sleeper
wait $sleeper 2>/dev/null

# chroot into a copy of busybox.
mkdir -p jail/bin
cp /bin/busybox jail/bin/busybox
echo in > jail/mark
eq "chroot sees its own root" "in" "$($bb chroot jail /bin/busybox cat /mark)"
ok "chroot cannot see out" not $bb chroot jail /bin/busybox test -e "$T/private"

if grep -q '^user01:' /etc/passwd && [ -u /bin/su ]; then
	eq "su user01" "1001" "$(su user01 -c 'id -u')"
	eq "user01's home" "/home/user01" "$(su user01 -c 'echo $HOME')"
	eq "home belongs to user01" "user01" "$(ls -ld /home/user01 | awk '{print $3}')"
	eq "users has 64 members" "65" "$(grep '^users:' /etc/group | tr ',' '\n' | wc -l)"
	su user01 -c "echo mine > $T/u1; chmod 600 $T/u1" 2>/dev/null
	chmod 1777 "$T"
	su user01 -c "echo mine > $T/u1; chmod 600 $T/u1"
	ok "user01 reads its own file" su user01 -c "cat $T/u1 >/dev/null"
	ok "user02 cannot read user01's file" not su user02 -c "cat $T/u1" 2>/dev/null
	ok "user02 cannot enter user01's home" not su user02 -c "ls /home/user01" 2>/dev/null
	# The inner su is named by path: busybox's shell runs its own applets
	# through /proc/self/exe (the plain busybox, not the set-user-id copy),
	# as it does on Linux, so only /bin/su itself runs as root.
	eq "su between users with the password" "1002" \
		"$(su user01 -c 'echo tempest | /bin/su user02 -c "id -u"' 2>/dev/null | tail -n 1)"
	ok "a wrong password is refused" not su user01 -c 'echo wrong | /bin/su user02 -c true' >/dev/null 2>&1
	ok "an ordinary user cannot chroot" not su user01 -c "chroot $T/jail /bin/busybox true" 2>/dev/null
	# busybox date reports the failure but exits 0: look at the clock.
	su user01 -c "date -s 2030-01-01" >/dev/null 2>&1
	ok "an ordinary user cannot set the clock" test "$(date +%Y)" != 2030
	# All 64 users at once, each writing its uid into its own home.
	for i in $(seq -w 1 64); do su user$i -c 'id -u > ~/uid.t' & done
	wait
	n=0
	for i in $(seq -w 1 64); do
		[ "$(cat /home/user$i/uid.t 2>/dev/null)" = "$((1000 + ${i#0}))" ] && n=$((n + 1))
		rm -f /home/user$i/uid.t
	done
	eq "64 users at once, each in its home" 64 "$n"
	chmod 755 "$T"
else
	echo "note: no user01 or no set-user-id /bin/su here: the image's users are not checked"
fi
ut_end

# sh_s5tools: mkfs.s5 and fsck.s5 as a user runs them (in Tempest from
# /bin, built static; on the host the same static builds from the build
# tree): make a file system in an image file, empty and filled from a
# directory, check it clean, damage it and see fsck.s5 refuse it.  Ends
# with "N passed, N failed".

. "$(dirname "$0")/ut.inc"
ut_begin sh_s5tools

guest="$(cd "$(dirname "$0")/../../../tools/guest" 2>/dev/null && pwd)"
if command -v mkfs.s5 >/dev/null 2>&1; then
	mkfs=mkfs.s5
	fsck=fsck.s5
elif [ -x "$guest/mkfs.s5" ]; then
	mkfs="$guest/mkfs.s5"
	fsck="$guest/fsck.s5"
else
	echo "note: no mkfs.s5 here"
	ut_end
	exit $?
fi

ok "mkfs.s5 empty" $mkfs img 1M
eq "image size" "1048576" "$(wc -c < img | tr -d ' ')"
ok "fsck.s5 clean" $fsck img >/dev/null

mkdir -p tree/sub
echo hello > tree/sub/greeting
ln -s sub/greeting tree/link
ok "mkfs.s5 -d" $mkfs -d tree filled 512K
eq "fsck.s5 counts" "2 files, 2 dirs" "$($fsck filled | sed -n 's/.*: \([0-9]* files, [0-9]* dirs\).*/\1/p')"

ok "a bad size is refused" not $mkfs bad 12Q 2>/dev/null
eq "one line for it" "1" "$($mkfs bad 12Q 2>&1 | wc -l | tr -d ' ')"
ok "too small is refused" not $mkfs tiny 2 2>/dev/null

# Damage the superblock's magic (the last bytes of its 512; the superblock
# is the second half of block 0, at byte 512, as SVR4 and Linux's sysv have it).
printf 'XXXX' | dd of=img bs=1 seek=$((512 + 504)) conv=notrunc 2>/dev/null
ok "fsck.s5 finds the damage" not $fsck img >/dev/null 2>&1
ut_end

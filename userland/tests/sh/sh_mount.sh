# sh_mount: a second disk used from user space, as a system administrator
# would: root formats it with the guest's mkfs.s5, mounts it on /mnt,
# writes files, sees it in df and mount, cannot unmount it while a process
# works in it, unmounts it, finds it clean with fsck.s5, mounts it again
# and reads the files back; an ordinary user cannot mount it.  Run as
# `busybox sh sh_mount.sh`; ends with "N passed, N failed".
#
# Only on Tempest (its /proc has options) with a second virtio disk (vdb,
# as the svr4mp preset's user boot has): on the host's Linux, or a boot
# with one disk, it checks nothing, so it never touches a host's disks.

. "$(dirname "$0")/ut.inc"
ut_begin sh_mount

if [ ! -e /proc/options ] || [ ! -e /dev/vdb ] || [ "$(id -u)" != 0 ]; then
	echo "note: not root on Tempest with a second disk: nothing to mount"
	ut_end
	exit
fi

ok "mkfs.s5 formats /dev/vdb" mkfs.s5 /dev/vdb 8M
ok "root mounts it" mount -t s5 /dev/vdb /mnt
ok "mount lists it" test -n "$(mount | grep '^/dev/vdb on /mnt type s5')"
eq "df shows it" "/mnt" "$(df /mnt | tail -n 1 | awk '{print $6}')"
echo "written on a second disk" > /mnt/note
mkdir /mnt/dir
cp /bin/busybox /mnt/dir/bb
ok "a file is written" test -s /mnt/dir/bb

# A process working in it keeps it busy.
(cd /mnt/dir && sleep 3) &
worker=$!
sleep 1
ok "a busy disk is not unmounted" not umount /mnt 2>/dev/null
wait $worker

ok "an ordinary user cannot mount" \
	not su user01 -c "/bin/busybox mount -t s5 /dev/vdb /home/user01" 2>/dev/null
ok "root unmounts it" umount /mnt
ok "fsck.s5 finds it clean" fsck.s5 /dev/vdb
ok "it mounts again" mount -t s5 /dev/vdb /mnt
eq "the note reads back" "written on a second disk" "$(cat /mnt/note)"
ok "the big file reads back" cmp /bin/busybox /mnt/dir/bb
ok "and unmounts" umount /mnt
ut_end

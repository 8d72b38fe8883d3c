# sh_files: busybox file utilities: ls, cat, cp, mv, rm, mkdir, find,
# head, tail, wc, test.  Ends with "N passed, N failed".

. "$(dirname "$0")/ut.inc"
ut_begin sh_files

# mkdir.
ok "mkdir" mkdir d1
ok "mkdir exists fails" not mkdir d1 2>/dev/null
ok "mkdir -p" mkdir -p a/b/c
ok "mkdir -p made it" test -d a/b/c
ok "mkdir -p again" mkdir -p a/b/c
ok "mkdir no parent fails" not mkdir x/y 2>/dev/null
mkdir -m 700 priv
eq "mkdir -m" "drwx------" "$(ls -ld priv | cut -c1-10)"

# cat.
printf 'one\ntwo\nthree\n' > f
printf 'four\n' > g
eq "cat" "one
two
three" "$(cat f)"
eq "cat two files" 4 "$(cat f g | wc -l | tr -d ' ')"
ok "cat missing fails" not cat nothing 2>/dev/null
cat f g > fg
eq "cat to a file" "four" "$(tail -n 1 fg)"

# cp.
ok "cp" cp f f2
ok "cp same contents" cmp -s f f2
cp f d1/
ok "cp into a directory" test -f d1/f
echo x > a/b/c/deep
ok "cp -r" cp -r a acopy
eq "cp -r contents" x "$(cat acopy/b/c/deep)"
ok "cp dir without -r fails" not cp a a2 2>/dev/null
chmod 0751 f2
cp -p f2 f3
eq "cp -p mode" "-rwxr-x--x" "$(ls -l f3 | cut -c1-10)"
ok "cp missing fails" not cp nothing x 2>/dev/null

# mv.
ok "mv" mv f2 moved
ok "mv: old gone" not test -e f2
ok "mv: new there" cmp -s f moved
mv moved d1/
ok "mv into a directory" test -f d1/moved
mv acopy a-renamed
ok "mv a directory" test -f a-renamed/b/c/deep
echo new > over
mv over g
eq "mv replaces" new "$(cat g)"
ok "mv missing fails" not mv nothing x 2>/dev/null

# rm.
ok "rm" rm f3
ok "rm: gone" not test -e f3
ok "rm missing fails" not rm nothing 2>/dev/null
ok "rm -f missing" rm -f nothing
ok "rm dir fails" not rm d1 2>/dev/null
ok "rm -r" rm -r a-renamed
ok "rm -r: gone" not test -e a-renamed
ok "rmdir non-empty fails" not rmdir a 2>/dev/null
rm a/b/c/deep
ok "rmdir" rmdir a/b/c
ok "rmdir: gone" not test -d a/b/c

# ls.
mkdir lsd
: > lsd/b
: > lsd/a
: > lsd/.hidden
mkdir lsd/c
eq "ls sorted" "a
b
c" "$(ls lsd)"
eq "ls -a" ".
..
.hidden
a
b
c" "$(ls -a lsd)"
eq "ls -1 count" 3 "$(ls -1 lsd | wc -l | tr -d ' ')"
eq "ls -d" lsd "$(ls -d lsd)"
ok "ls missing fails" not ls lsd/zzz 2>/dev/null
printf '12345' > lsd/a
eq "ls -l size" 5 "$(ls -l lsd/a | awk '{print $5}')"
eq "ls -F dir" "c/" "$(ls -F lsd | grep c)"
ln -s a lsd/link
eq "ls -l symlink" "l a" "$(ls -l lsd/link | sed 's/^\(.\).*-> /\1 /')"
eq "cat through symlink" 12345 "$(cat lsd/link)"

# find.
mkdir -p ft/x/y
: > ft/x/one.c
: > ft/x/y/two.c
: > ft/three.h
eq "find -name" "ft/x/one.c
ft/x/y/two.c" "$(find ft -name '*.c' | sort)"
eq "find -type d" "ft
ft/x
ft/x/y" "$(find ft -type d | sort)"
eq "find -type f count" 3 "$(find ft -type f | wc -l | tr -d ' ')"
eq "find -maxdepth" "ft/three.h" "$(find ft -maxdepth 1 -type f)"
eq "find -exec" "two.c" "$(find ft -name two.c -exec basename {} \;)"

# head, tail, wc.
i=1
while [ $i -le 20 ]; do echo "line $i"; i=$((i + 1)); done > lines
eq "head default" 10 "$(head lines | wc -l | tr -d ' ')"
eq "head -n 3" "line 1
line 2
line 3" "$(head -n 3 lines)"
eq "tail -n 2" "line 19
line 20" "$(tail -n 2 lines)"
eq "tail -n +19" "line 19
line 20" "$(tail -n +19 lines)"
eq "head -c" "line" "$(head -c 4 lines)"
eq "wc -l" 20 "$(wc -l < lines | tr -d ' ')"
eq "wc -w" 40 "$(wc -w < lines | tr -d ' ')"
eq "wc -c" 7 "$(printf 'abc\ndef' | wc -c | tr -d ' ')"

# A bigger copy keeps every byte.
i=0
while [ $i -lt 200 ]; do echo "0123456789abcdefghijklmnopqrstuvwxyz $i"; i=$((i + 1)); done > big
cp big big2
ok "big copy" cmp -s big big2
eq "big size" "$(wc -c < big)" "$(wc -c < big2)"

# Permissions seen by test.
: > perm
chmod 000 perm
if [ "$(id -u)" = 0 ]; then
	ok "root reads mode 000" test -r perm
else
	ok "mode 000 unreadable" not test -r perm
fi
chmod 644 perm

ut_end

# GAEDE script: compile a small C program with gcc, link it, run it, and
# check its counts against wc's.  The compile writes only into the home
# (-pipe: no temporary file); the link goes through collect2, whose
# temporary names ("ccXXXXXX.cdtor.c") are longer than S5's 14 bytes, so
# it keeps them in /tmp.
set -e
cp src/prog.c work/prog.c
gcc -O1 -pipe -c -o work/prog.o work/prog.c
TMPDIR=/tmp gcc -o work/prog work/prog.o
./work/prog src/notes.txt > work/prog.out
test "$(sed -n 's/^lines //p' work/prog.out)" -eq "$(wc -l < src/notes.txt)"
test "$(sed -n 's/^words //p' work/prog.out)" -eq "$(wc -w < src/notes.txt)"
rm -f work/prog work/prog.o

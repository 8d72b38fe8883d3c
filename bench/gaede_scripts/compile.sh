# GAEDE script: compile a small C program with gcc, run it, and check
# its counts against wc's.
set -e
cp src/prog.c work/prog.c
gcc -O1 -o work/prog work/prog.c
./work/prog src/notes.txt > work/prog.out
test "$(sed -n 's/^lines //p' work/prog.out)" -eq "$(wc -l < src/notes.txt)"
test "$(sed -n 's/^words //p' work/prog.out)" -eq "$(wc -w < src/notes.txt)"
rm -f work/prog

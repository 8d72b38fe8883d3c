# GAEDE script: search the tree with grep -r, sort and count the words.
set -e
grep -r -n -i 'lock' src > work/grep.out
grep -r -l 'the' src | sort > work/files.out
test -s work/files.out
tr -s ' ' '\n' < src/notes.txt | sort | uniq -c | sort -rn | head -n 20 > work/words.out
test "$(wc -l < work/words.out)" -eq 20
wc -w src/notes.txt work/grep.out > work/count.out

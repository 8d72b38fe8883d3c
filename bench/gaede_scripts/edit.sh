# GAEDE script: edit a copy of notes.txt with sed, in place and with
# ed-style line addresses, and check what the edits left.
set -e
cp src/notes.txt work/notes.txt
kept=$(grep -vc '^#' src/notes.txt)
sed -i -e '/^#/d' -e 's/the/THE/g' work/notes.txt
sed -i -e '1i\
edited by '"$USER" -e '$a\
the end' work/notes.txt
sed -i -e '10,20s/^/> /' -e '5,8d' work/notes.txt
sed -n '/^> /p' work/notes.txt > work/quoted.txt
test "$(wc -l < work/quoted.txt)" -eq 11
test "$(wc -l < work/notes.txt)" -eq $((kept + 2 - 4))
test "$(head -n 1 work/notes.txt)" = "edited by $USER"
! grep -q ' the ' work/notes.txt

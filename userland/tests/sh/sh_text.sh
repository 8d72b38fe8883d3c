# sh_text: busybox text tools: grep, sed, sort, wc, head, tail, echo,
# in pipelines.  Ends with "N passed, N failed".

. "$(dirname "$0")/ut.inc"
ut_begin sh_text

cat > fruit <<'END'
apple 3
Banana 12
cherry 7
apple 1
date 30
elderberry 7
END

# grep.
eq "grep" "apple 3
apple 1" "$(grep apple fruit)"
eq "grep -c" 2 "$(grep -c apple fruit)"
eq "grep -v count" 4 "$(grep -v apple fruit | wc -l | tr -d ' ')"
eq "grep -i" "Banana 12" "$(grep -i banana fruit)"
eq "grep -n" "3:cherry 7" "$(grep -n cherry fruit)"
eq "grep -E" "cherry 7
elderberry 7" "$(grep -E 'rr(y|ies) 7' fruit)"
eq "grep anchors" "date 30" "$(grep '^d.*0$' fruit)"
ok "grep -q found" grep -q date fruit
ok "grep -q missing" not grep -q fig fruit
grep fig fruit
eq "grep no match status" 1 "$?"
grep fig nothing 2>/dev/null
eq "grep missing file status" 2 "$?"
echo nothing-here > other
eq "grep -l" "fruit" "$(grep -l apple other fruit)"
eq "grep -w" 0 "$(grep -cw 'app' fruit)"
eq "grep -o" "30" "$(grep -o '[0-9][0-9]' fruit | grep 3)"

# sed.
eq "sed s" "pear 3" "$(head -n 1 fruit | sed 's/apple/pear/')"
eq "sed s///g" "b-n-n-" "$(echo banana | sed 's/a/-/g; s/^-//')"
eq "sed -n p" "cherry 7" "$(sed -n '3p' fruit)"
eq "sed d" 5 "$(sed '/Banana/d' fruit | wc -l | tr -d ' ')"
eq "sed range" "Banana 12
cherry 7" "$(sed -n '2,3p' fruit)"
eq "sed groups" "3 apple" "$(head -n 1 fruit | sed 's/\(.*\) \(.*\)/\2 \1/')"
eq "sed -E" "X12" "$(echo ab12 | sed -E 's/[a-z]+/X/')"
eq "sed \$" "elderberry 7" "$(sed -n '$p' fruit)"
cp fruit f2
sed -i 's/date/fig/' f2
eq "sed -i" "fig 30" "$(grep fig f2)"
ok "sed -i kept the rest" test "$(wc -l < f2)" -eq 6
eq "sed y" "HELLO" "$(echo hello | sed 'y/ehlo/EHLO/')"

# sort.
eq "sort" "Banana 12
apple 1
apple 3
cherry 7
date 30
elderberry 7" "$(LC_ALL=C sort fruit)"
eq "sort -n -k2" "1 3 7 7 12 30" "$(sort -n -k2 fruit | awk '{print $2}' | tr '\n' ' ' | sed 's/ $//')"
eq "sort -rn" 30 "$(awk '{print $2}' fruit | sort -rn | head -n 1)"
eq "sort -u" "1
12
3
30
7" "$(awk '{print $2}' fruit | LC_ALL=C sort -u)"
eq "sort -t -k" "c:1
a:2
b:3" "$(printf 'a:2\nb:3\nc:1\n' | sort -t: -k2)"
eq "sort -r" "z
m
a" "$(printf 'a\nz\nm\n' | sort -r)"
printf '3\n1\n2\n' > unsorted
ok "sort -c unsorted fails" not sort -c unsorted 2>/dev/null
sort unsorted > sorted
ok "sort -c sorted" sort -c sorted

# wc.
eq "wc -l" 6 "$(wc -l < fruit | tr -d ' ')"
eq "wc -w" 12 "$(wc -w < fruit | tr -d ' ')"
eq "wc -c" "$(cat fruit | wc -c | tr -d ' ')" "$(wc -c < fruit | tr -d ' ')"
eq "wc on a pipe" 3 "$(printf 'a b\nc\nd\n' | wc -l | tr -d ' ')"

# head and tail in pipelines; echo.
eq "head | tail" "cherry 7" "$(head -n 3 fruit | tail -n 1)"
eq "tail -c" "7" "$(tail -c 2 fruit | head -c 1)"
eq "echo | grep | wc" 2 "$(echo 'x
y
x' | grep x | wc -l | tr -d ' ')"

# A longer pipeline: words by frequency.
cat > text <<'END'
the cat and the dog and the bird
a cat is not a dog
END
eq "frequency pipeline" "3 the" "$(tr ' ' '\n' < text | grep -v '^$' | sort | uniq -c | sort -rn | head -n 1 | sed 's/^ *//')"
eq "line count via grep -c ''" 2 "$(grep -c '' text)"

# Large input through a pipe (more than a pipe buffer).
i=0
while [ $i -lt 3000 ]; do echo "row $i"; i=$((i + 1)); done > many
eq "3000 rows through sort -n" "row 2999" "$(sort -k2 -n many | tail -n 1)"
eq "grep count on many" 300 "$(grep -c '9$' many)"
eq "cat | wc" 3000 "$(cat many | cat | wc -l | tr -d ' ')"

ut_end

# sh_basics: the busybox shell itself, with echo, test and sleep.
# Run as `busybox sh sh_basics.sh`; prints one line per failure and ends
# with "N passed, N failed" (exit status 0 only when none failed).

. "$(dirname "$0")/ut.inc"
ut_begin sh_basics

# Variables, quoting, parameter expansion.
a=hello
b="$a world"
eq "quoted expansion" "hello world" "$b"
eq "single quotes" '$a' '$a'
eq "length" 5 "${#a}"
eq "default" "dflt" "${unset_var:-dflt}"
eq "suffix strip" "file" "$(f=file.txt; echo "${f%.txt}")"
eq "prefix strip" "c" "$(p=a/b/c; echo "${p##*/}")"
set -- x "y z" w
eq "positional count" 3 "$#"
eq "positional 2" "y z" "$2"

# Arithmetic.
eq "arithmetic" 42 $((6 * 7))
eq "precedence" 14 $((2 + 3 * 4))
eq "division" 3 $((10 / 3))
eq "modulo" 1 $((10 % 3))
i=0
while [ $i -lt 10 ]; do i=$((i + 1)); done
eq "while loop" 10 "$i"

# Control flow.
out=""
for w in one two three; do out="$out$w."; done
eq "for loop" "one.two.three." "$out"
case "banana" in
	a*) c=a ;;
	b*) c=b ;;
	*) c=other ;;
esac
eq "case" b "$c"
if false; then r=then; elif true; then r=elif; else r=else; fi
eq "if/elif" elif "$r"
sq() { echo $(($1 * $1)); return 3; }
eq "function" 81 "$(sq 9)"
sq 2 >/dev/null
eq "function status" 3 "$?"

# Exit statuses.
true
eq "true" 0 "$?"
false
eq "false" 1 "$?"
sh -c 'exit 7'
eq "sh -c exit" 7 "$?"
(exit 5)
eq "subshell exit" 5 "$?"
x=outer
(x=inner)
eq "subshell isolation" outer "$x"
ok "&& and ||" sh -c 'false && exit 1; true || exit 1; exit 0'

# Redirections, pipes, here-documents.
echo first > f
echo second >> f
eq "redirect and append" "first
second" "$(cat f)"
eq "input redirect" first "$(head -n 1 < f)"
eq "pipe" 2 "$(cat f | wc -l | tr -d ' ')"
sh -c 'echo to-stderr 1>&2' 2> err
eq "stderr redirect" to-stderr "$(cat err)"
eq "2>&1" both "$(sh -c 'echo both >&2' 2>&1)"
cat > h <<END
line $a
END
eq "here-doc" "line hello" "$(cat h)"
eq "nested substitution" 5 "$(echo $(echo 5))"
ok "pipeline status is the last" sh -c 'false | true'
ok "negated pipeline" sh -c '! true | false'

# echo.
eq "echo -n" "ab" "$(echo -n a; echo -n b)"
eq "echo args" "a b c" "$(echo a   b c)"
eq "echo -e" "x	y" "$(echo -e 'x\ty')"

# test / [.
ok "-f" test -f f
ok "! -f dir" not test -f .
ok "-d" [ -d . ]
ok "-e" [ -e f ]
ok "! -e" not [ -e nothing ]
: > empty
ok "-s nonempty" [ -s f ]
ok "! -s empty" not [ -s empty ]
ok "-z" [ -z "" ]
ok "-n" [ -n "x" ]
ok "= strings" [ abc = abc ]
ok "!= strings" [ abc != abd ]
ok "-eq" [ 3 -eq 3 ]
ok "-lt" [ 2 -lt 10 ]
ok "-ge" [ 10 -ge 10 ]
ok "! -gt" not [ 1 -gt 2 ]
ok "-a" [ -f f -a -d . ]
ok "-o" [ -f nothing -o -d . ]
chmod 0755 f
ok "-x" [ -x f ]
chmod 0644 f
ok "! -x" not [ -x f ]

# Background jobs and wait.
sh -c 'exit 9' &
wait $!
eq "wait status" 9 "$?"
(echo bg > bgfile) &
wait
eq "background output" bg "$(cat bgfile)"
eq "\$\$ is a number" yes "$(case $$ in *[!0-9]*) echo no ;; *) echo yes ;; esac)"

# sleep: returns 0; a bad argument fails.
ok "sleep 0" sleep 0
ok "sleep 0.05" sleep 0.05
ok "sleep bad" not sleep nonsense 2>/dev/null

# Running a script file by path with #!.
printf '#!/bin/sh\necho from-script "$@"\n' > s.sh
eq "sh script.sh" "from-script 1 2" "$(sh s.sh 1 2)"

ut_end

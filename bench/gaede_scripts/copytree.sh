# GAEDE script: copy a directory tree, list it, and compare the copy.
set -e
rm -rf work/tree
cp -r src/tree work/tree
ls -lR work/tree > work/ls.out
test "$(find work/tree -type f | wc -l)" -eq "$(find src/tree -type f | wc -l)"
diff -r src/tree work/tree > /dev/null
ls -l src work > /dev/null

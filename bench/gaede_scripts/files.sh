# GAEDE script: remove and recreate many small files.
set -e
rm -rf work/many
mkdir work/many
i=0
while [ $i -lt 20 ]; do
    echo "file $i of $USER" > work/many/f$i
    i=$((i + 1))
done
test "$(cat work/many/f* | wc -l)" -eq 20
rm work/many/f1*
test "$(ls work/many | wc -l)" -eq 9
rm -r work/many

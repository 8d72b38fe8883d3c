# Debian's PostgreSQL 15 (issue 31's judge), run as root inside Tempest
# on the UFS root and on the Linux peer chrooted in the same tree on ext4;
# tests/debian_check.py compares the lines before "pg-end" between the two
# and takes the tps line after it as a figure.  SCALE and RUN_SECONDS are set
# in front of this text by the check (pgbench -i -s SCALE, -T RUN_SECONDS).
#
# The server runs as user01 on a Unix socket in /tmp alone (Debian's
# install scripts never ran in the image: no postgres user, no
# /var/run/postgresql), and every client is told so by PGHOST.
cat > /tmp/pg_user.sh <<'EOF'
B=/usr/lib/postgresql/15/bin
H=/home/user01
D=$H/pgdata
export PATH=$B:/usr/bin:/bin HOME=$H LANG=C.UTF-8 PGHOST=/tmp PGUSER=postgres PAGER=cat
cd $H || exit 1
rm -rf $D
q() { psql -X -A -t -q -v ON_ERROR_STOP=1 -c "$1" postgres; }
initdb -D $D --locale=C.UTF-8 -E UTF8 -U postgres -A trust > initdb.log 2>&1
echo "initdb $?"
pg_ctl -D $D -l pg.log -w -t 300 -o "-c listen_addresses='' -k /tmp" start > /dev/null
echo "start $?"
q "create table t (a int, b text)"
q "insert into t select g, md5(g::text) from generate_series(1, 10000) g"
q "select count(*), sum(a), md5(string_agg(b, '' order by a)) from t"
q "update t set b = upper(b) where a % 7 = 0"
q "select count(*) from t where b ~ '[A-F]'"
q "create index t_b on t (b)"
q "select a from t where b = upper(md5('700'))"
pgbench -i -q -s $SCALE postgres > init.log 2>&1
echo "pgbench-init $?"
pgbench -c 4 -j 2 -T $RUN_SECONDS postgres > bench.log 2>&1
echo "pgbench $?"
q "select (select count(*) from pgbench_accounts), (select count(*) from pgbench_branches),
          (select count(*) from pgbench_tellers)"
q "select (select sum(abalance) from pgbench_accounts) = (select sum(bbalance) from pgbench_branches)
      and (select sum(bbalance) from pgbench_branches) = (select sum(tbalance) from pgbench_tellers)
      and (select sum(tbalance) from pgbench_tellers) = (select coalesce(sum(delta), 0) from pgbench_history)
      and (select count(*) from pgbench_history) > 0"
pg_ctl -D $D -m fast -w stop > /dev/null
echo "stop $?"
echo pg-end
grep -E '^tps' bench.log | head -1
grep -E 'ERROR|FATAL|PANIC' pg.log initdb.log init.log bench.log | head -5
EOF
echo "SCALE=$SCALE RUN_SECONDS=$RUN_SECONDS" > /tmp/pg_env.sh
cat /tmp/pg_env.sh /tmp/pg_user.sh > /tmp/pg_run.sh
chmod 755 /tmp/pg_run.sh
su user01 -s /bin/sh -c 'sh /tmp/pg_run.sh'

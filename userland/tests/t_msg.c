/*
 * t_msg: System V message queues.
 *
 * msgget (IPC_EXCL, missing keys), msgsnd (bad types and sizes, a full
 * queue with IPC_NOWAIT, a sender blocked until a receive makes room),
 * msgrcv (type 0, > 0, < 0 and MSG_EXCEPT, E2BIG and MSG_NOERROR, ENOMSG,
 * a receiver blocked until a send, EINTR, EIDRM on removal, EFAULT),
 * msgctl (IPC_STAT's counts and pids, IPC_SET of msg_qbytes), a producer
 * and a consumer exchanging 300 messages of three types with the order
 * kept within each type, and another user refused a 0600 queue.
 */
#include "ut.h"

#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/ipc.h>
#include <sys/msg.h>
#include <sys/wait.h>
#include <unistd.h>

struct message {
	long type;
	char text[64];
};

static int made[16], nmade;

static int track(int id)
{
	if (id >= 0 && nmade < 16)
		made[nmade++] = id;
	return id;
}

static key_t key_for(int n)
{
	return (key_t)(0x5d000000 | ((getpid() & 0xffff) << 4) | n);
}

static int child_status(pid_t pid)
{
	int st;
	return waitpid(pid, &st, 0) == pid ? st : -1;
}

static int send(int id, long type, const char *text, int flags)
{
	struct message m = { .type = type };
	strncpy(m.text, text, sizeof m.text - 1);
	return msgsnd(id, &m, strlen(text) + 1, flags);
}

/* Receive into m; the text received, or "" on failure. */
static const char *recv_text(int id, long type, int flags, struct message *m)
{
	memset(m, 0, sizeof *m);
	return msgrcv(id, m, sizeof m->text, type, flags) < 0 ? "" : m->text;
}

static unsigned long qnum(int id)
{
	struct msqid_ds ds;
	return msgctl(id, IPC_STAT, &ds) == 0 ? ds.msg_qnum : (unsigned long)-1;
}

/* Give a child time to reach its wait (a queue does not show its
 * waiters).  The checks that use it hold whether or not the child is
 * already asleep, except EIDRM's, which the child first announces. */
static void let_run(void)
{
	for (int i = 0; i < 2000; i++)
		sched_yield();
}

static void test_get_and_args(void)
{
	CHECK_ERR(msgget(key_for(1), 0600), ENOENT);
	int id = track(CHECK_OK(msgget(key_for(1), IPC_CREAT | 0600)));
	CHECK_EQ(msgget(key_for(1), 0600), id);
	CHECK_ERR(msgget(key_for(1), IPC_CREAT | IPC_EXCL | 0600), EEXIST);
	struct message m = { .type = 0 };
	CHECK_ERR(msgsnd(id, &m, 1, 0), EINVAL);
	m.type = -3;
	CHECK_ERR(msgsnd(id, &m, 1, 0), EINVAL);
	m.type = 1;
	CHECK_ERR(msgsnd(id, &m, 8193, 0), EINVAL);
	CHECK_ERR(msgsnd(id, &m, (size_t)-1, 0), EINVAL);
	CHECK_ERR(msgsnd(id, UT_BADPTR, 1, 0), EFAULT);
	CHECK_ERR(msgsnd(-1, &m, 1, 0), EINVAL);
	CHECK_ERR(msgrcv(id, &m, (size_t)-1, 0, 0), EINVAL);
	CHECK_ERR(msgrcv(id, &m, sizeof m.text, 0, IPC_NOWAIT), ENOMSG);
	CHECK_OK(msgsnd(id, &m, 0, 0));		/* an empty message is fine */
	CHECK_EQ(msgrcv(id, &m, sizeof m.text, 0, 0), 0);
	CHECK_EQ(m.type, 1);
}

static void test_selection(void)
{
	int id = track(CHECK_OK(msgget(IPC_PRIVATE, 0600)));
	send(id, 3, "three", 0);
	send(id, 1, "one", 0);
	send(id, 2, "two", 0);
	send(id, 1, "one-b", 0);
	send(id, 5, "five", 0);
	struct message m;
	CHECK(strcmp(recv_text(id, 2, 0, &m), "two") == 0);
	CHECK(strcmp(recv_text(id, -4, 0, &m), "one") == 0);	/* lowest type <= 4 */
	CHECK(strcmp(recv_text(id, 3, MSG_EXCEPT, &m), "one-b") == 0);
	CHECK(strcmp(recv_text(id, 0, 0, &m), "three") == 0);	/* the first */
	CHECK_ERR(msgrcv(id, &m, sizeof m.text, 4, IPC_NOWAIT), ENOMSG);
	/* Too long: E2BIG and the message stays; MSG_NOERROR truncates. */
	CHECK_ERR(msgrcv(id, &m, 2, 0, 0), E2BIG);
	CHECK_EQ(qnum(id), 1);
	memset(&m, 0, sizeof m);
	CHECK_EQ(msgrcv(id, &m, 2, 0, MSG_NOERROR), 2);
	CHECK(m.type == 5 && m.text[0] == 'f' && m.text[1] == 'i' && m.text[2] == 0);
	CHECK_EQ(qnum(id), 0);
	send(id, 1, "lost", 0);
	CHECK_ERR(msgrcv(id, UT_BADPTR, 8, 0, 0), EFAULT);
}

static void test_stat_and_limits(void)
{
	int id = track(CHECK_OK(msgget(IPC_PRIVATE, 0640)));
	send(id, 1, "12345", 0);		/* 6 bytes */
	send(id, 1, "123", 0);			/* 4 bytes */
	struct msqid_ds ds;
	CHECK_OK(msgctl(id, IPC_STAT, &ds));
	CHECK_EQ(ds.msg_qnum, 2);
	CHECK_EQ(ds.msg_cbytes, 10);
	CHECK_EQ(ds.msg_lspid, getpid());
	CHECK_EQ(ds.msg_lrpid, 0);
	CHECK_EQ(ds.msg_perm.mode & 0777, 0640);
	CHECK(ds.msg_qbytes >= 16384);
	CHECK(ds.msg_stime > 0);
	/* A 12-byte queue is full after the next 2 bytes. */
	ds.msg_qbytes = 12;
	CHECK_OK(msgctl(id, IPC_SET, &ds));
	CHECK_OK(send(id, 2, "a", 0));
	CHECK_ERR(send(id, 2, "b", IPC_NOWAIT), EAGAIN);
	/* A blocked sender goes ahead when a receive makes room. */
	pid_t pid = fork();
	if (pid == 0)
		_exit(send(id, 3, "late", 0) == 0 ? 0 : 1);
	let_run();
	CHECK_EQ(qnum(id), 3);
	struct message m;
	CHECK(strcmp(recv_text(id, 1, 0, &m), "12345") == 0);
	CHECK_EQ(child_status(pid), 0);
	CHECK(strcmp(recv_text(id, 3, 0, &m), "late") == 0);
	CHECK_OK(msgctl(id, IPC_STAT, &ds));
	CHECK_EQ(ds.msg_lrpid, getpid());
	CHECK_EQ(ds.msg_lspid, pid);
	CHECK_ERR(msgctl(id, IPC_STAT, UT_BADPTR), EFAULT);
	CHECK_ERR(msgctl(id, 4321, &ds), EINVAL);
}

static void on_signal(int sig)
{
}

static void test_blocking_receive(void)
{
	int id = track(CHECK_OK(msgget(IPC_PRIVATE, 0600)));
	/* Woken by a send from another process. */
	pid_t pid = fork();
	if (pid == 0) {
		struct message m;
		_exit(strcmp(recv_text(id, 7, 0, &m), "wake") == 0 ? 0 : 1);
	}
	let_run();
	send(id, 6, "other", 0);
	send(id, 7, "wake", 0);
	CHECK_EQ(child_status(pid), 0);
	CHECK_EQ(qnum(id), 1);

	/* A signal with a handler ends the wait with EINTR. */
	struct sigaction sa = { .sa_handler = on_signal };
	sigaction(SIGUSR1, &sa, NULL);
	pid = fork();
	if (pid == 0) {
		struct message m;
		int r = msgrcv(id, &m, sizeof m.text, 9, 0);
		_exit(r == -1 && errno == EINTR ? 0 : 1);
	}
	int st, tries = 0;
	while (waitpid(pid, &st, WNOHANG) == 0 && tries++ < 1000) {
		kill(pid, SIGUSR1);	/* again, until it was in its wait */
		let_run();
	}
	CHECK(WIFEXITED(st) && WEXITSTATUS(st) == 0);

	/* Removal ends the wait with EIDRM. */
	pid = fork();
	if (pid == 0) {
		struct message m;
		send(id, 8, "ready", 0);
		int r = msgrcv(id, &m, sizeof m.text, 9, 0);
		_exit(r == -1 && errno == EIDRM ? 0 : 1);
	}
	struct message ready;
	CHECK(strcmp(recv_text(id, 8, 0, &ready), "ready") == 0);
	let_run();
	CHECK_OK(msgctl(id, IPC_RMID, NULL));
	CHECK_EQ(child_status(pid), 0);
	CHECK_ERR(msgctl(id, IPC_STAT, NULL), EINVAL);
}

static void test_producer_consumer(void)
{
	int id = track(CHECK_OK(msgget(IPC_PRIVATE, 0600)));
	pid_t pid = fork();
	if (pid == 0) {
		for (int i = 0; i < 300; i++) {
			struct message m = { .type = 1 + i % 3 };
			snprintf(m.text, sizeof m.text, "%d", i);
			if (msgsnd(id, &m, strlen(m.text) + 1, 0) != 0)
				_exit(1);
		}
		_exit(0);
	}
	/* Type 2 first, then whatever comes: within a type, in order. */
	int last[4] = { -1, -1, -1, -1 }, got = 0, bad = 0;
	struct message m;
	for (int n = 0; n < 100; n++) {
		if (msgrcv(id, &m, sizeof m.text, 2, 0) < 0)
			break;
		int v = atoi(m.text);
		bad += v % 3 != 1 || v <= last[2];
		last[2] = v;
		got++;
	}
	for (int n = 0; n < 200; n++) {
		if (msgrcv(id, &m, sizeof m.text, 0, 0) < 0)
			break;
		int v = atoi(m.text);
		bad += m.type < 1 || m.type > 3 || v % 3 != m.type - 1 || v <= last[m.type];
		last[m.type] = v;
		got++;
	}
	CHECK_EQ(got, 300);
	CHECK_EQ(bad, 0);
	CHECK_EQ(child_status(pid), 0);
}

static int shared_id;
static key_t shared_key;

static void as_nobody(void *arg)
{
	struct message m = { .type = 1 };
	CHECK_ERR(msgsnd(shared_id, &m, 1, IPC_NOWAIT), EACCES);
	CHECK_ERR(msgrcv(shared_id, &m, 1, 0, IPC_NOWAIT), EACCES);
	struct msqid_ds ds;
	CHECK_ERR(msgctl(shared_id, IPC_STAT, &ds), EACCES);
	CHECK_ERR(msgctl(shared_id, IPC_RMID, NULL), EPERM);
	memset(&ds, 0, sizeof ds);
	CHECK_ERR(msgctl(shared_id, IPC_SET, &ds), EPERM);
	CHECK_ERR(msgget(shared_key, 0600), EACCES);
}

static void test_other_user(void)
{
	shared_key = key_for(2);
	shared_id = track(CHECK_OK(msgget(shared_key, IPC_CREAT | 0600)));
	ut_unprivileged("another user's 0600 queue", as_nobody, NULL);
}

int main(int argc, char **argv)
{
	ut_init(argc, argv);
	test_get_and_args();
	test_selection();
	test_stat_and_limits();
	test_blocking_receive();
	test_producer_consumer();
	test_other_user();
	for (int i = 0; i < nmade; i++)
		msgctl(made[i], IPC_RMID, NULL);
	return ut_done();
}

/*
 * t_ipcs: System V IPC objects listed and removed the way ipcs(1) and
 * ipcrm(1) do it (busybox's and util-linux's alike).
 *
 * Debian's busybox is built without its ipcs and ipcrm applets, and
 * util-linux's are dynamic glibc programs, so this program makes the same
 * calls they make: IPC_INFO and SHM_INFO / SEM_INFO / MSG_INFO for the
 * highest slot in use, then SHM_STAT / SEM_STAT / MSG_STAT on every slot
 * up to it, each answering with the object's full id; `ipcrm -m ID` is
 * IPC_RMID by id and `ipcrm -M KEY` a get of the key and then IPC_RMID.
 * Its own objects (one of each kind, under keys no other program uses)
 * must be found with the right key, mode, size and counts, and must be
 * gone afterwards.
 */
#include "ut.h"

#include <stdint.h>
#include <sys/ipc.h>
#include <sys/msg.h>
#include <sys/sem.h>
#include <sys/shm.h>
#include <unistd.h>

#ifdef __GLIBC__
#define __ipc_perm_key __key     /* glibc's name for musl's __ipc_perm_key */
#endif

/* Not in musl's headers: the *_INFO results. */
struct ut_shm_info {
	int used_ids;
	unsigned long shm_tot, shm_rss, shm_swp, swap_attempts, swap_successes;
};

union semun {
	int val;
	struct semid_ds *buf;
	unsigned short *array;
	struct seminfo *info;
};

/* The slot an id names. */
static int slot_of(int id)
{
	return id & 0x7fff;
}

static key_t key_for(int kind)
{
	return (key_t)(0x7e000000 | ((getpid() & 0xffff) << 4) | kind);
}

static void test_shm_listing(void)
{
	key_t key = key_for(1);
	int id = CHECK_OK(shmget(key, 12345, IPC_CREAT | IPC_EXCL | 0640));
	if (id < 0)
		return;
	struct shminfo info;
	int max = CHECK_OK(shmctl(0, IPC_INFO, (struct shmid_ds *)&info));
	CHECK(max >= slot_of(id));
	CHECK(info.shmmax >= 12345);
	CHECK(info.shmmni > 0);
	struct ut_shm_info si;
	CHECK(shmctl(0, SHM_INFO, (struct shmid_ds *)&si) == max);
	CHECK(si.used_ids >= 1);
	CHECK(si.shm_tot >= 4);			/* 12345 bytes: 4 pages */
	int found = 0;
	for (int i = 0; i <= max; i++) {
		struct shmid_ds ds;
		int r = shmctl(i, SHM_STAT, &ds);
		if (r != id)
			continue;
		found++;
		CHECK_EQ(ds.shm_perm.__ipc_perm_key, key);
		CHECK_EQ(ds.shm_perm.mode & 0777, 0640);
		CHECK_EQ(ds.shm_segsz, 12345);
		CHECK_EQ(ds.shm_nattch, 0);
		CHECK_EQ(ds.shm_cpid, getpid());
		CHECK_EQ(ds.shm_perm.uid, geteuid());
	}
	CHECK_EQ(found, 1);
	/* A slot past the highest in use names nothing. */
	struct shmid_ds ds;
	CHECK_ERR(shmctl(max + 1, SHM_STAT, &ds), EINVAL);
	/* ipcrm -M KEY */
	int again = CHECK_OK(shmget(key, 0, 0));
	CHECK_EQ(again, id);
	CHECK_OK(shmctl(again, IPC_RMID, NULL));
	CHECK_ERR(shmget(key, 0, 0), ENOENT);
	CHECK_ERR(shmctl(id, IPC_STAT, &ds), EINVAL);
}

static void test_sem_listing(void)
{
	key_t key = key_for(2);
	int id = CHECK_OK(semget(key, 3, IPC_CREAT | IPC_EXCL | 0600));
	if (id < 0)
		return;
	struct seminfo info;
	union semun arg = { .info = &info };
	int max = CHECK_OK(semctl(0, 0, IPC_INFO, arg));
	CHECK(max >= slot_of(id));
	CHECK(info.semmsl >= 3);
	CHECK(info.semvmx >= 32767);
	CHECK(semctl(0, 0, SEM_INFO, arg) == max);
	CHECK(info.semusz >= 1);		/* SEM_INFO: sets in use */
	CHECK(info.semaem >= 3);		/* SEM_INFO: semaphores in use */
	int found = 0;
	for (int i = 0; i <= max; i++) {
		struct semid_ds ds;
		arg.buf = &ds;
		if (semctl(i, 0, SEM_STAT, arg) != id)
			continue;
		found++;
		CHECK_EQ(ds.sem_perm.__ipc_perm_key, key);
		CHECK_EQ(ds.sem_perm.mode & 0777, 0600);
		CHECK_EQ(ds.sem_nsems, 3);
	}
	CHECK_EQ(found, 1);
	/* ipcrm -s ID */
	CHECK_OK(semctl(id, 0, IPC_RMID));
	CHECK_ERR(semget(key, 0, 0), ENOENT);
	CHECK_ERR(semctl(id, 0, GETVAL), EINVAL);
}

static void test_msg_listing(void)
{
	key_t key = key_for(3);
	int id = CHECK_OK(msgget(key, IPC_CREAT | IPC_EXCL | 0604));
	if (id < 0)
		return;
	struct {
		long type;
		char text[10];
	} m = { 7, "123456789" };
	CHECK_OK(msgsnd(id, &m, 10, 0));
	CHECK_OK(msgsnd(id, &m, 5, 0));
	struct msginfo info;
	int max = CHECK_OK(msgctl(0, IPC_INFO, (struct msqid_ds *)&info));
	CHECK(max >= slot_of(id));
	CHECK(info.msgmax >= 8192);
	CHECK(info.msgmnb >= 16384);
	CHECK(msgctl(0, MSG_INFO, (struct msqid_ds *)&info) == max);
	CHECK(info.msgpool >= 1);		/* MSG_INFO: queues in use */
	CHECK(info.msgmap >= 2);		/* MSG_INFO: messages */
	CHECK(info.msgtql >= 15);		/* MSG_INFO: bytes */
	int found = 0;
	for (int i = 0; i <= max; i++) {
		struct msqid_ds ds;
		if (msgctl(i, MSG_STAT, &ds) != id)
			continue;
		found++;
		CHECK_EQ(ds.msg_perm.__ipc_perm_key, key);
		CHECK_EQ(ds.msg_perm.mode & 0777, 0604);
		CHECK_EQ(ds.msg_qnum, 2);
		CHECK_EQ(ds.msg_cbytes, 15);
		CHECK_EQ(ds.msg_lspid, getpid());
	}
	CHECK_EQ(found, 1);
	/* ipcrm -Q KEY */
	int again = CHECK_OK(msgget(key, 0));
	CHECK_EQ(again, id);
	CHECK_OK(msgctl(again, IPC_RMID, NULL));
	CHECK_ERR(msgget(key, 0), ENOENT);
	CHECK_ERR(msgsnd(id, &m, 1, IPC_NOWAIT), EINVAL);
}

int main(int argc, char **argv)
{
	ut_init(argc, argv);
	test_shm_listing();
	test_sem_listing();
	test_msg_listing();
	return ut_done();
}

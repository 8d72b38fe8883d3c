/*
 * System V IPC as user programs see it: Linux's x86-64 structures,
 * commands and flags (include/uapi/linux/{shm,sem,msg}.h and the
 * asm-generic 64-bit *buf.h layouts), checked by size.
 */
#ifndef KERN_IPC_IPC_ABI_H
#define KERN_IPC_IPC_ABI_H

#include <kern/ipc/ipc.h>

/* Shared memory. */
#define SHM_RDONLY      010000
#define SHM_RND         020000
#define SHM_REMAP       040000
#define SHM_EXEC        0100000
#define SHM_DEST        01000   /* mode bit: removed, lives until detached */
#define SHM_LOCK        11
#define SHM_UNLOCK      12
#define SHM_STAT        13
#define SHM_INFO        14
#define SHM_STAT_ANY    15
#define SHMLBA          PAGE_SIZE

struct shmid64_ds_u {
    struct ipc64_perm_u shm_perm;
    uint64_t shm_segsz;
    int64_t shm_atime, shm_dtime, shm_ctime;
    int32_t shm_cpid, shm_lpid;
    uint64_t shm_nattch;
    uint64_t unused4, unused5;
};
_Static_assert(sizeof(struct shmid64_ds_u) == 112, "struct shmid64_ds");

struct shminfo64_u {
    uint64_t shmmax, shmmin, shmmni, shmseg, shmall;
    uint64_t unused1, unused2, unused3, unused4;
};
_Static_assert(sizeof(struct shminfo64_u) == 72, "struct shminfo64");

struct shm_info_u {
    int32_t used_ids;
    uint64_t shm_tot, shm_rss, shm_swp, swap_attempts, swap_successes;
};
_Static_assert(sizeof(struct shm_info_u) == 48, "struct shm_info");

/* Semaphores. */
#define SEM_UNDO        0x1000
#define GETPID          11
#define GETVAL          12
#define GETALL          13
#define GETNCNT         14
#define GETZCNT         15
#define SETVAL          16
#define SETALL          17
#define SEM_STAT        18
#define SEM_INFO        19
#define SEM_STAT_ANY    20

struct sembuf_u {
    uint16_t sem_num;
    int16_t sem_op;
    int16_t sem_flg;
};
_Static_assert(sizeof(struct sembuf_u) == 6, "struct sembuf");

struct semid64_ds_u {
    struct ipc64_perm_u sem_perm;
    int64_t sem_otime;
    uint64_t unused1;
    int64_t sem_ctime;
    uint64_t unused2;
    uint64_t sem_nsems;
    uint64_t unused3, unused4;
};
_Static_assert(sizeof(struct semid64_ds_u) == 104, "struct semid64_ds");

struct seminfo_u {
    int32_t semmap, semmni, semmns, semmnu, semmsl, semopm, semume, semusz, semvmx, semaem;
};
_Static_assert(sizeof(struct seminfo_u) == 40, "struct seminfo");

/* Message queues. */
#define MSG_NOERROR     010000
#define MSG_EXCEPT      020000
#define MSG_COPY        040000
#define MSG_STAT        11
#define MSG_INFO        12
#define MSG_STAT_ANY    13

struct msqid64_ds_u {
    struct ipc64_perm_u msg_perm;
    int64_t msg_stime, msg_rtime, msg_ctime;
    uint64_t msg_cbytes, msg_qnum, msg_qbytes;
    int32_t msg_lspid, msg_lrpid;
    uint64_t unused4, unused5;
};
_Static_assert(sizeof(struct msqid64_ds_u) == 120, "struct msqid64_ds");

struct msginfo_u {
    int32_t msgpool, msgmap, msgmax, msgmnb, msgmni, msgssz, msgtql;
    uint16_t msgseg;
};
_Static_assert(sizeof(struct msginfo_u) == 32, "struct msginfo");

#endif

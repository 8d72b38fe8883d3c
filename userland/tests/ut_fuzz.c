/*
 * ut_fuzz [N [SEED [FROM]]]: random system calls on every CPU.
 *
 * The parent forks one child per CPU it may run on (its sched_getaffinity
 * mask), pins the child to that CPU (sched_setaffinity) and makes it an
 * unprivileged user (FUZZ_UID).  Each child makes N system calls (default
 * 3000) with numbers drawn from an allow-list of calls that cannot hurt
 * the machine or stop the test by design (no kill, exit, vfork, clone,
 * execve, fixed mappings, brk, ptrace, set*id, setrlimit,
 * sched_setaffinity, sockets, and anything that can block for ever:
 * FIFOs, inotify/signalfd/eventfd/timerfd descriptors, flock, sleeps and
 * waits), plus a few unknown numbers, and random arguments: small
 * numbers, descriptors, random bits, huge lengths, unmapped and kernel
 * addresses, and pointers into a scratch buffer, to file names (all
 * relative and inside the child's own scratch directory) or into the
 * mappings the fuzzing made.  Arguments that could break the test itself
 * are tamed (see tame()): pipes are always non-blocking, poll never
 * waits, munmap, mprotect, madvise and mremap touch only the fuzzing's
 * own mappings, and a forked child exits at once.
 *
 * A child shares nothing with the parent but a page of shared memory: it
 * owns every descriptor it has (a random write or close cannot reach the
 * test's own pipes), and it records there the call it is making and, at
 * the end, its report.  After its calls the child must still be alive,
 * still on its CPU, and ordinary calls must still work: getpid, a file
 * in the check directory created, written and read back, a pipe, an
 * anonymous mapping.
 *
 * The parent waits for every child.  A child that stops making progress
 * for HANG_SECONDS is killed and reported as hung (the guard counts
 * progress, not time: a slow machine is not a failure).  A child that
 * died or broke is reported with its CPU, the call it was making and the
 * seed, so the run can be repeated.  Afterwards the parent checks that
 * the kernel still works: every child is gone once reaped (kill(pid, 0)
 * is ESRCH) and none is left to wait for, each child's file in the check directory holds what it wrote, files,
 * pipes, fork and exit status work, and a process still runs on every
 * CPU.
 *
 * The same SEED gives every child the same calls with the same arguments
 * (child i's random numbers depend on SEED and i only; a pointer into a
 * mapping depends on where the kernel put it).  UT_FUZZ_TRACE=i in the
 * environment makes child i print each call before making it and its
 * result after, on a descriptor of its own at the top of its table: for
 * a kernel that hangs as a whole, where no process is left to report,
 * and to compare the results with Linux's call by call.
 *
 * At scale (tools/fuzz.py, `make fuzz`): half the calls are drawn from
 * the described ones (ut_fuzz_types.h: arguments typed as descriptors,
 * paths, lengths, flags, usually valid), and everything the calls make is
 * kept bounded (ut_fuzz_bound.h: descriptors closed, mappings unmapped,
 * files and IPC objects removed as the run goes), so N may be millions;
 * signals arrive from pseudo-calls.  Every PROGRESS_SECONDS the parent
 * prints each child's call index ("fuzz: progress ..."), so a panic of
 * the whole kernel is placed to within a few seconds of calls; FROM
 * replays a run making only the calls FROM..N-1 (the earlier ones are
 * drawn and skipped), to shorten a sequence that fails.  A child that dies
 * is reported with its last RECENT calls.
 */
#include "ut.h"
#include "../../kern/abi/tempest_abi.h"

#include <fcntl.h>
#include <grp.h>
#include <sched.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/ioctl.h>
#include <sys/ipc.h>
#include <sys/msg.h>
#include <sys/sem.h>
#include <sys/shm.h>
#include <sys/socket.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define BUF_SIZE (64 * 1024)
#define MAX_CHILDREN 64
#define HANG_SECONDS 30 /* without any progress */
#define PROGRESS_SECONDS 10
#define RECENT 8 /* calls remembered for a report */
/* The fuzzing user: not 65534, which daemons of the host may share. */
#define FUZZ_UID 65530

/* x86-64 Linux numbers of harmless calls; see the comment above.  Left
   out on purpose, among others: 22 pipe (cannot be made non-blocking;
   293 pipe2 is in), 23 select (blocks for ever with no descriptors), 12
   brk (would shrink our own heap), 56 clone, 435 clone3 and 58 vfork (a
   child that shares our memory), 62 kill, 200 tkill and 234 tgkill (could kill the
   harness or ourselves: kill(-1, SIGKILL)), 37 alarm and 38 setitimer (a
   timer's signal kills), 169 reboot (root only, but never worth the
   risk), 203 sched_setaffinity (would move the child off its CPU, or
   another fuzzing child: same uid), 231 exit_group and 60 exit (ends the
   child early; it must report), 310 process_vm_readv and 311
   process_vm_writev (could write into a sibling fuzzing child, same uid),
   322 execveat (replaces the child). */
static const int allowed[] = {
	0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 13, 14, 16, 17, 18, 19, 20, 21,
	24, 25, 26, 27, 28, 32, 33, 36, 39, 40, 57, 61, 63, 72, 74, 75, 76, 77,
	78, 79, 80, 81,
	82, 83, 84, 85, 86, 87, 88, 89, 90, 91, 92, 93, 94, 95, 96, 97, 98,
	99, 100, 102, 104, 107, 108, 109, 110, 111, 112, 115, 118, 120, 121,
	124, 125, 127, 131, 132, 137, 138, 140, 143, 145, 146, 147, 148, 186,
	187, 191, 192, 193, 194, 195, 196, 201, 204, 213, 217, 221, 228, 229,
	233, 235, 247, 252, 257, 258, 260, 261, 262, 263, 264,
	265, 266, 267, 268, 269, 274, 275, 276, 277, 280, 291, 292, 293, 295,
	296, 302, 303, 309, 315, 316, 318, 319, 326, 327, 328, 332, 437, 439,
	/* System V IPC: shmget, shmat, shmctl, semget, semop, semctl, shmdt,
	   msgget, msgsnd, msgrcv, msgctl, semtimedop (tamed: never waits;
	   every object removed by remove_ipc_objects) */
	29, 30, 31, 64, 65, 66, 67, 68, 69, 70, 71, 220,
	/* setpriority, chroot, settimeofday, clock_settime: the child is
	   not root, so at most its own (and its siblings') nice value rises */
	141, 161, 164, 227,
	/* syslog (reads and refusals: the children are not root), mount,
	   umount2, sethostname and setdomainname (EPERM for them) */
	103, 165, 166, 170, 171,
	/* sockets (never AF_INET, AF_INET6 or AF_PACKET; tamed: every
	   socket non-blocking, every send and receive MSG_DONTWAIT),
	   eventfd2 (non-blocking), the epoll waits (never waiting),
	   close_range (never the trace descriptor), personality (asking
	   only), mlock, munlock, mlock2 and munlockall (not mlockall:
	   MCL_FUTURE would make the child's own later mappings fail on
	   Linux), unshare (no user namespace, which Linux gives an
	   unprivileged user and which would change the child's ids),
	   setns, capset, fallocate (at most 1 MiB), syncfs */
	41, 42, 43, 44, 45, 46, 47, 48, 49, 50, 51, 52, 53, 54, 55, 288, 299,
	307, 290, 232, 281, 441, 436, 135, 149, 150, 152, 325, 272, 308, 126,
	285, 306,
	/* vmsplice (splice and tee are above): tamed, SPLICE_F_NONBLOCK;
	   membarrier, restart_syscall, set_mempolicy, get_mempolicy, mbind,
	   move_pages and migrate_pages (a policy binds, and a move moves,
	   only a fuzzing child's own pages, or a sibling's: same uid) */
	278, 324, 219, 238, 239, 237, 279, 256,
	/* ptrace: tamed, never TRACEME, ATTACH or SEIZE (a sibling stopped
	   for good, or the harness made a tracer), so every other request
	   names nobody's tracee and tests the checks before ESRCH */
	101,
	/* sched_setparam, sched_setscheduler, sched_setattr: tamed, never
	   SCHED_IDLE (a child that runs only when its CPU has nothing else
	   would look hung); a user gets no real-time class (RLIMIT_RTPRIO
	   is 0) */
	142, 144, 314,
	/* Tempest's own (kern/abi/tempest_abi.h; ENOSYS on Linux): the
	   statistics reset and snapshots, the ENOSYS counts */
	1000, 1001, 1002, 1003,
	/* not system calls at all */
	500, 1004, 4096, 100000,
};
#define NALLOWED ((int)(sizeof allowed / sizeof allowed[0]))

static const char *const names[] = {
	"fz0", "fz1", "dir0", "dir0/fz2", "link0", "", ".", "dir1", "fz3",
};
#define NNAMES ((int)(sizeof names / sizeof names[0]))

/* One child's page slot, shared with the parent. */
struct slot {
	volatile long index;  /* the call being made, -1 before the first */
	volatile long number; /* its number */
	volatile long args[6];
	volatile int cpu;     /* the CPU it is pinned to */
	volatile int done;    /* all calls made */
	volatile long recent[RECENT][8]; /* index, number, args: ring by index */
	char report[160];     /* "alive ..." or "broken: what" */
};

static uint64_t rng;

static uint64_t next(void)
{
	/* xorshift64* */
	rng ^= rng >> 12;
	rng ^= rng << 25;
	rng ^= rng >> 27;
	return rng * 2685821657736338717ULL;
}

static void seed_rng(unsigned long seed, int child)
{
	rng = (seed * 0x9e3779b97f4a7c15ULL + 1) ^ ((uint64_t)child << 40);
	if (rng == 0)
		rng = 1;
	for (int i = 0; i < 8; i++)
		next();
}

/* The mappings the fuzzing made (mmap, mremap), for the calls that may
   unmap or change memory: they get these and nothing of ours. */
#define MAX_MAPS 32
static struct { unsigned long addr, len; } maps[MAX_MAPS];
static int nmaps, next_map;

static void remember_map(unsigned long addr, unsigned long len)
{
	if (len == 0)
		return;
	if (maps[next_map].len)
		munmap((void *)maps[next_map].addr, maps[next_map].len);
	maps[next_map].addr = addr;
	maps[next_map].len = len;
	next_map = (next_map + 1) % MAX_MAPS;
	if (nmaps < MAX_MAPS)
		nmaps++;
}

static char *buf;   /* BUF_SIZE bytes, then the names page, then a guard */
static char *namepg;
static const char *scratch; /* absolute: the fuzzing may chdir anywhere */
static int trace_fd = -1;   /* UT_FUZZ_TRACE: where this child traces */

/* New random bytes in the buffer (all of it on every 64th call, a
   window of it otherwise: refilling 64 KiB per call would cost more than
   the call), and the names page made again. */
static void refill(long i)
{
	int from = 0, to = BUF_SIZE;
	if (i % 64 != 0) {
		from = (int)(next() % (BUF_SIZE / 512)) * 512;
		to = from + 512;
	}
	for (int i = from; i < to; i += 8) {
		uint64_t v = next();
		memcpy(buf + i, &v, 8);
	}
	/* No '/' or '.' in random bytes: a name made of them stays here. */
	for (int i = from; i < to; i++)
		if (buf[i] == '/' || buf[i] == '.')
			buf[i] = 'q';
	memset(namepg, 0, 4096);
	for (int i = 0; i < NNAMES; i++)
		strcpy(namepg + 64 * i, names[i]);
}

static long bad_pointer(void)
{
	static const long bad[] = {
		1, 0x1000, 0xdead0000L, 0x7ffffffff000L, 0x800000000000L,
		(long)0xffff800000000000UL, (long)0xffffffff80000000UL,
		(long)0xffffffffffffffffUL, 0,
	};
	uint64_t r = next();
	if (r % 4 == 0)
		return (long)(0xffff800000000000UL + (next() & 0x7fffffffff000UL));
	return bad[r % (sizeof bad / sizeof bad[0])];
}

/* An address inside one of the fuzzing's mappings (page aligned or not),
   with *room the bytes from there to the mapping's end; 0 when none. */
static long in_map(unsigned long *room)
{
	/* Three draws whatever the mappings, so that the stream of random
	   numbers does not depend on what the kernel returned. */
	uint64_t r1 = next(), r2 = next(), r3 = next();
	if (nmaps == 0) {
		*room = 0;
		return 0;
	}
	int i = (int)(r1 % nmaps);
	unsigned long off = r2 % maps[i].len;
	if (r3 % 2)
		off &= ~4095UL;
	*room = maps[i].len - off;
	return (long)(maps[i].addr + off);
}

static long arg(void)
{
	uint64_t r = next();
	unsigned long room;
	switch (r % 14) {
	case 12:
	case 13:
		return in_map(&room); /* memory the fuzzing mapped */
	case 0:
	case 1:
		return (long)(next() % 64);       /* small numbers and fds */
	case 2:
		return (long)(next() % 8) - 4;    /* around zero */
	case 3:
		return (long)next();              /* any bits */
	case 4:
		return (long)(next() & 0xffffffff);
	case 5: {
		static const long huge[] = { 1L << 62, -1, 1L << 31, 0x7fffffff,
					     4096, 1L << 40 };
		return huge[next() % 6];
	}
	case 6:
	case 7:
		return bad_pointer();
	case 8:
	case 9:
		return (long)(buf + next() % BUF_SIZE); /* a valid buffer */
	default:
		return (long)(namepg + 64 * (next() % NNAMES)); /* a name */
	}
}

/* A pointer argument that must not point at memory we own. */
static long not_ours(void)
{
	return next() % 3 == 0 ? 0 : bad_pointer();
}

/* Arguments that would break the test rather than the kernel; the call
 * to make (accept becomes a non-blocking accept4). */
static long tame(long nr, long a[6])
{
	unsigned long room;
	uint64_t r;
	switch (nr) {
	case SYS_munmap:
	case SYS_mprotect:
	case SYS_madvise:
	case SYS_mremap:
		/* Only the fuzzing's own mappings, and within them; or an
		   address above user space, with any length (whether it
		   wraps is the kernel's to check). */
		r = next();
		if (r % 4 == 0) {
			static const unsigned long high[] = {
				0x800000000000UL, 0xffff800000000000UL,
				0xffffffff80000000UL, 0xfffffffffffff000UL };
			a[0] = (long)high[(r >> 8) % 4];
		} else {
			a[0] = in_map(&room);
			a[1] = room ? (long)((r >> 8) % room) + 1 : 0;
		}
		if (nr == SYS_mremap)
			a[3] &= ~3L; /* no MREMAP_FIXED, MREMAP_MAYMOVE allowed */
		if (nr == SYS_mremap)
			a[3] &= ~4L; /* no MREMAP_DONTUNMAP */
		break;
	case SYS_pipe2:
		a[1] |= O_NONBLOCK; /* a read of our own empty pipe returns */
		break;
	case SYS_socket:
	case SYS_socketpair:
		a[1] |= SOCK_NONBLOCK; /* nothing waits for a peer */
		/* No family that reaches beyond the machine: on the host, an
		   AF_INET socket's random sendto would go to a random address.
		   Other families (AF_UNIX, AF_NETLINK, unknown ones) stay. */
		if ((int)a[0] == AF_INET || (int)a[0] == AF_INET6 ||
		    (int)a[0] == AF_PACKET)
			a[0] = AF_UNIX;
		break;
	case SYS_accept:
		a[3] = SOCK_NONBLOCK; /* as accept, but non-blocking */
		return SYS_accept4;
	case SYS_accept4:
		a[3] |= SOCK_NONBLOCK;
		break;
	case SYS_sendto:
	case SYS_recvfrom:
		a[3] |= MSG_DONTWAIT;
		break;
	case SYS_sendmsg:
	case SYS_recvmsg:
	case SYS_sendmmsg:
		a[2] |= MSG_DONTWAIT;
		break;
	case SYS_recvmmsg:
		a[3] |= MSG_DONTWAIT;
		a[4] = 0; /* no timeout to wait out */
		break;
	case SYS_eventfd2:
		a[1] |= O_NONBLOCK;
		break;
	case SYS_splice:
		a[5] |= 2; /* SPLICE_F_NONBLOCK: a pipe's own O_NONBLOCK does not count */
		break;
	case SYS_tee:
	case SYS_vmsplice:
		a[3] |= 2;
		break;
	case SYS_epoll_wait:
	case SYS_epoll_pwait:
		a[3] = 0; /* never wait */
		if (nr == SYS_epoll_pwait)
			a[4] = 0; /* nor change the mask */
		break;
	case 441: { /* epoll_pwait2: a zero timeout */
		static const struct timespec zero = { 0, 0 };
		a[3] = (long)&zero;
		a[4] = 0;
		break;
	}
	case SYS_close_range:
		if (trace_fd >= 0 && a[1] >= trace_fd)
			a[1] = trace_fd - 1;
		break;
	case SYS_personality:
		a[0] = 0xffffffffL; /* ask only */
		break;
	case SYS_unshare:
		a[0] &= ~0x10000000L; /* no CLONE_NEWUSER */
		break;
	case SYS_fallocate:
		a[3] &= 0xfffff; /* at most 1 MiB of the host's disk */
		break;
	case SYS_poll:
		a[2] = 0; /* never wait */
		break;
	case SYS_ioctl:
		if (a[1] == FIONBIO)
			a[1] = FIONREAD; /* pipes stay non-blocking */
		break;
	case SYS_mmap:
		/* Never over our memory, never populate or lock it. */
		a[3] &= ~(long)(MAP_FIXED | 0x100000 /* MAP_FIXED_NOREPLACE */ |
				MAP_POPULATE | MAP_LOCKED);
		break;
	case SYS_rt_sigaction:
		a[1] = not_ours(); /* no random handlers */
		break;
	case SYS_sigaltstack:
		a[0] = not_ours();
		break;
	case SYS_prlimit64:
		a[2] = not_ours(); /* read limits only */
		break;
	case SYS_semop:
	case SYS_semtimedop: {
		/* Random operations, each with IPC_NOWAIT, or a bad pointer. */
		static struct sembuf sops[4];
		for (int i = 0; i < 4; i++) {
			sops[i].sem_num = (unsigned short)(next() % 4);
			sops[i].sem_op = (short)((long)(next() % 5) - 2);
			sops[i].sem_flg = (short)(IPC_NOWAIT | (next() % 2 ? SEM_UNDO : 0));
		}
		if (next() % 4)
			a[1] = (long)sops;
		else if (a[1] >= (long)buf && a[1] < (long)buf + BUF_SIZE)
			a[1] = not_ours();
		break;
	}
	case SYS_ptrace:
		if (a[0] == 0 || a[0] == 16 || a[0] == 0x4206)
			a[0] = 3; /* PTRACE_PEEKUSER */
		break;
	case SYS_sched_setscheduler:
		if ((a[1] & ~0x40000000L) == SCHED_IDLE)
			a[1] = SCHED_BATCH;
		break;
	case SYS_sched_setattr: {
		/* Random bytes with a policy that is never SCHED_IDLE, and
		   now and then a size and policy that pass the first checks;
		   or a pointer that is not ours. */
		static uint32_t attr[16];
		if (next() % 4 == 0) {
			a[1] = not_ours();
			break;
		}
		for (int i = 0; i < 16; i++)
			attr[i] = (uint32_t)next();
		if (next() % 2) {
			attr[0] = 48 + (uint32_t)(next() % 2) * 8;
			attr[1] = (uint32_t)(next() % 4);
		}
		if (attr[1] == SCHED_IDLE)
			attr[1] = SCHED_BATCH;
		a[1] = (long)attr;
		break;
	}
	case SYS_msgsnd:
		a[3] |= IPC_NOWAIT;
		break;
	case SYS_msgrcv:
		a[4] |= IPC_NOWAIT;
		break;
	case SYS_shmat:
		a[1] = 0;               /* the kernel chooses: never over our own mappings */
		a[2] &= ~SHM_REMAP;
		break;
	case SYS_fcntl:
		/* No signals chosen by chance (F_SETOWN 8, F_SETSIG 10,
		   F_SETOWN_EX 15, F_NOTIFY 1026), no waiting on our own locks
		   (F_SETLKW 7, F_OFD_SETLKW 38) or leases (F_SETLEASE 1024). */
		if (a[1] == 7 || a[1] == 8 || a[1] == 10 || a[1] == 15 ||
		    a[1] == 38 || a[1] == 1024 || a[1] == 1026)
			a[1] = F_GETFL;
		if (a[1] == F_SETFL)
			a[2] |= O_NONBLOCK; /* pipes stay non-blocking */
		break;
	}
	/* The trace descriptor, when there is one, stays put. */
	if (trace_fd >= 0 && (nr == SYS_close || nr == SYS_dup2 || nr == SYS_dup3)) {
		int target = nr == SYS_close ? 0 : 1;
		if ((int)a[target] == trace_fd)
			a[target] = 3;
	}
	return nr;
}

/* Remove every System V object this user made: found as ipcs finds
   them (the *_STAT_ANY commands need no read permission, and a random
   IPC_SET cannot take away the creator's right to remove). */
static void remove_ipc_objects(void)
{
	uid_t me = geteuid();
	struct shmid_ds sds;
	struct semid_ds ds;
	struct msqid_ds mds;
	int max = shmctl(0, SHM_INFO, &sds);
	for (int i = 0; i <= max; i++) {
		int id = shmctl(i, SHM_STAT_ANY, &sds);
		if (id >= 0 && sds.shm_perm.cuid == me)
			shmctl(id, IPC_RMID, NULL);
	}
	max = semctl(0, 0, SEM_INFO, &ds);
	for (int i = 0; i <= max; i++) {
		int id = semctl(i, 0, SEM_STAT_ANY, &ds);
		if (id >= 0 && ds.sem_perm.cuid == me)
			semctl(id, 0, IPC_RMID);
	}
	max = msgctl(0, MSG_INFO, &mds);
	for (int i = 0; i <= max; i++) {
		int id = msgctl(i, MSG_STAT_ANY, &mds);
		if (id >= 0 && mds.msg_perm.cuid == me)
			msgctl(id, IPC_RMID, NULL);
	}
}

static void trace(long i, long nr, const long a[6])
{
	char line[200];
	int n = snprintf(line, sizeof line,
			 "fuzz: call %ld nr %ld (%#lx, %#lx, %#lx, %#lx, %#lx, %#lx)\n",
			 i, nr, a[0], a[1], a[2], a[3], a[4], a[5]);
	(void)!write(trace_fd, line, n);
}

static void trace_result(long r)
{
	char line[64];
	int n = snprintf(line, sizeof line, "fuzz: = %ld (errno %d)\n", r,
			 r == -1 ? errno : 0);
	(void)!write(trace_fd, line, n);
}

/* Files 0, 1 and 2 of the child's own, in its play directory. */
static void open_standard_files(void)
{
	open("stdin", O_RDWR | O_CREAT, 0644);
	open("stdout", O_RDWR | O_CREAT, 0644);
	open("stderr", O_RDWR | O_CREAT, 0644);
	mkdir("dir0", 0755);
	mkdir("dir1", 0755);
}

#include "ut_fuzz_types.h"
#include "ut_fuzz_bound.h"
#include "ut_fuzz_threads.h"

static int pin_to(int cpu)
{
	cpu_set_t set;
	CPU_ZERO(&set);
	CPU_SET(cpu, &set);
	return sched_setaffinity(0, sizeof set, &set);
}

/* Is the calling process allowed on cpu alone, and running there? */
static int pinned_at(int cpu)
{
	cpu_set_t set;
	CPU_ZERO(&set);
	return sched_getaffinity(0, sizeof set, &set) == 0 && CPU_COUNT(&set) == 1 &&
	       CPU_ISSET(cpu, &set) && sched_getcpu() == cpu;
}

/* After the calls: does the kernel still serve us?  NULL, or what broke. */
static const char *still_works(pid_t me, int cpu, int child)
{
	umask(022);
	sigset_t none;
	sigemptyset(&none);
	sigprocmask(SIG_SETMASK, &none, NULL);
	if (getpid() != me)
		return "getpid";
	if (!pinned_at(cpu))
		return "affinity";
	char path[256];
	snprintf(path, sizeof path, "%s/check/a%d", scratch, child);
	int fd = open(path, O_RDWR | O_CREAT | O_TRUNC, 0644);
	char back[8] = { 0 };
	int ok = fd >= 0 && write(fd, "alive", 5) == 5 &&
		 pread(fd, back, 5, 0) == 5 && memcmp(back, "alive", 5) == 0;
	if (fd >= 0)
		close(fd);
	if (!ok)
		return "file";
	int p[2];
	if (pipe(p) != 0 || write(p[1], "x", 1) != 1 || read(p[0], back, 1) != 1 ||
	    back[0] != 'x')
		return "pipe";
	close(p[0]);
	close(p[1]);
	char *m = mmap(NULL, 8192, PROT_READ | PROT_WRITE,
		       MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (m == MAP_FAILED)
		return "mmap";
	m[8191] = 1;
	if (munmap(m, 8192) != 0)
		return "munmap";
	return NULL;
}

/* Draw call i: its number and arguments. */
static long draw_call(long a[6])
{
	uint64_t r = next();
	long nr;
	if (r % 16 == 0) {
		static const long pseudo[] = { PSEUDO_RAISE, PSEUDO_TIMER, PSEUDO_THREAD };
		nr = pseudo[(r >> 4) % 3];
	}
	else if (r % 2)
		nr = descs[(r >> 8) % NDESCS].nr;
	else
		nr = allowed[(r >> 8) % NALLOWED];
	choose_args(nr, a);
	return tame(nr, a);
}

static void record_call(struct slot *sl, long i, long nr, const long a[6])
{
	volatile long *rec = sl->recent[i % RECENT];
	rec[0] = i;
	rec[1] = nr;
	for (int k = 0; k < 6; k++)
		rec[2 + k] = sl->args[k] = a[k];
	sl->number = nr;
	sl->index = i;
}

static long make_call(pid_t me, long nr, const long a[6])
{
	if (nr == PSEUDO_RAISE)
		return raise_signal(me, a[0]);
	if (nr == PSEUDO_TIMER)
		return arm_timer(a[0]);
	if (nr == PSEUDO_THREAD)
		return start_thread(a[0]);
	return syscall(nr, a[0], a[1], a[2], a[3], a[4], a[5]);
}

static void after_call(long nr, const long a[6], long r)
{
	if ((nr == SYS_mmap || nr == SYS_mremap) && r != -1)
		remember_map((unsigned long)r,
			     (unsigned long)(nr == SYS_mmap ? a[1] : a[2]));
	if (returns_fd(nr) && r >= 0)
		remember_fd((int)r);
	if (nr == SYS_pipe2 && r == 0 && a[0] == (long)buf) {
		remember_fd(((int *)buf)[0]);
		remember_fd(((int *)buf)[1]);
	}
}

static void fuzz_child(long n, long from, struct slot *sl, int child,
		       unsigned long seed)
{
	/* Only our own descriptors: nothing inherited that could block, and
	   standard files of our own, so nothing reaches the parent's output. */
	const char *tr = getenv("UT_FUZZ_TRACE");
	struct rlimit nofile;
	getrlimit(RLIMIT_NOFILE, &nofile);
	if (tr && atoi(tr) == child && nofile.rlim_cur > 8) {
		trace_fd = (int)(nofile.rlim_cur < 256 ? nofile.rlim_cur : 256) - 1;
		dup2(2, trace_fd);
	}
	for (int fd = 0; fd < 256; fd++)
		if (fd != trace_fd)
			close(fd);
	open_standard_files();
	if (!getcwd(play_dir, sizeof play_dir))
		play_dir[0] = 0;
	catch_signals();
	int ignore[] = { SIGPIPE, SIGXFSZ, SIGIO, SIGURG, SIGTTIN, SIGTTOU,
			 SIGWINCH, SIGCHLD };
	for (size_t i = 0; i < sizeof ignore / sizeof ignore[0]; i++)
		signal(ignore[i], SIG_IGN);
	struct rlimit fsize = { 1 << 20, 1 << 20 }, as = { 1L << 30, 1L << 30 };
	setrlimit(RLIMIT_FSIZE, &fsize); /* bounded files */
	setrlimit(RLIMIT_AS, &as);       /* bounded mappings */

	seed_rng(seed, child);
	pid_t me = getpid();
	long counts[4] = { 0 }; /* ok, ENOSYS, EFAULT, other errors */
	for (long i = 0; i < n; i++) {
		long a[6];
		long nr = draw_call(a);
		refill(i);
		record_call(sl, i, nr, a);
		if (i >= from) {
			if (trace_fd >= 0)
				trace(i, nr, a);
			long r = make_call(me, nr, a);
			if (nr == SYS_fork && r == 0)
				_exit(0); /* the forked copy leaves at once */
			if (trace_fd >= 0)
				trace_result(r);
			after_call(nr, a, r);
			counts[r != -1 ? 0 : errno == ENOSYS ? 1 : errno == EFAULT ? 2 : 3]++;
		}
		keep_bounded(i);
	}
	stop_timer();
	join_helper();
	sl->done = 1;
	while (waitpid(-1, NULL, 0) > 0 || errno == EINTR)
		; /* the forked copies (SIGCHLD is ignored: none is left) */
	remove_ipc_objects();

	const char *broken = still_works(me, sl->cpu, child);
	if (broken)
		snprintf(sl->report, sizeof sl->report, "broken: %s (errno %d)",
			 broken, errno);
	else
		snprintf(sl->report, sizeof sl->report,
			 "alive %ld ok %ld enosys %ld efault %ld other %ld", n,
			 counts[0], counts[1], counts[2], counts[3]);
	_exit(broken ? 3 : 0);
}

/* Start child i on cpu: its pid, or -1. */
static pid_t start_child(long n, long from, struct slot *sl, int i, int cpu,
			 unsigned long seed)
{
	sl->index = -1;
	sl->cpu = cpu;
	pid_t pid = fork();
	if (pid != 0)
		return pid;
	char dir[16];
	snprintf(dir, sizeof dir, "play%d", i);
	if (pin_to(cpu) != 0 || !pinned_at(cpu)) {
		snprintf(sl->report, sizeof sl->report,
			 "broken: not pinned to cpu %d", cpu);
		_exit(4);
	}
	(void)setgroups(0, NULL); /* as ut_drop_privileges: may be missing */
	if (chdir(dir) != 0 || setgid(FUZZ_UID) != 0 || setuid(FUZZ_UID) != 0 ||
	    getuid() != FUZZ_UID || geteuid() != FUZZ_UID) {
		snprintf(sl->report, sizeof sl->report,
			 "broken: cannot become uid %d (errno %d)", FUZZ_UID, errno);
		_exit(4);
	}
	fuzz_child(n, from, sl, i, seed);
	_exit(5); /* not reached */
}

static double now(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

/* Sum of the children's call indexes: it grows while any makes progress. */
static long progress(struct slot *slots, int nchild)
{
	long sum = 0;
	for (int i = 0; i < nchild; i++)
		sum += slots[i].index + slots[i].done;
	return sum;
}

/* One line with each child's call index, for placing a panic. */
static void show_progress(struct slot *slots, int nchild)
{
	char line[1024];
	int len = snprintf(line, sizeof line, "fuzz: progress");
	for (int i = 0; i < nchild && len < (int)sizeof line - 32; i++)
		len += snprintf(line + len, sizeof line - len, " %ld", slots[i].index);
	printf("%s\n", line);
	fflush(stdout);
}

/*
 * Reap every child into status[], polling (no alarm: the guard must work
 * on a kernel without one).  Children still running when none has made
 * progress for HANG_SECONDS are killed and marked in hung[].
 */
static void reap_all(pid_t *pids, int *status, int *hung, struct slot *slots,
		     int nchild)
{
	int left = nchild;
	long last = progress(slots, nchild);
	double since = now(), shown = now();
	while (left > 0) {
		if (now() - shown > PROGRESS_SECONDS) {
			show_progress(slots, nchild);
			shown = now();
		}
		int st;
		pid_t r = waitpid(-1, &st, WNOHANG);
		if (r > 0) {
			for (int i = 0; i < nchild; i++)
				if (pids[i] == r) {
					status[i] = st;
					pids[i] = -pids[i]; /* reaped */
					left--;
				}
			continue;
		}
		if (r < 0 && errno != EINTR)
			break;
		long p = progress(slots, nchild);
		if (p != last) {
			last = p;
			since = now();
		} else if (now() - since > HANG_SECONDS) {
			for (int i = 0; i < nchild; i++)
				if (pids[i] > 0) {
					hung[i] = 1;
					kill(pids[i], SIGKILL);
				}
			since = now(); /* now wait for the kills */
		}
		struct timespec tick = { 0, 20 * 1000 * 1000 };
		nanosleep(&tick, NULL);
	}
	for (int i = 0; i < nchild; i++)
		pids[i] = pids[i] < 0 ? -pids[i] : pids[i];
}

/* The child's last calls, oldest first: the sequence to replay. */
static void show_recent(struct slot *sl)
{
	long first = sl->index - RECENT + 1;
	for (long i = first < 0 ? 0 : first; i <= sl->index; i++) {
		volatile long *rec = sl->recent[i % RECENT];
		if (rec[0] != i)
			continue;
		ut_note("  call %ld: syscall %ld (%#lx, %#lx, %#lx, %#lx, %#lx, %#lx)",
			i, rec[1], rec[2], rec[3], rec[4], rec[5], rec[6], rec[7]);
	}
	ut_note("replay: ut_fuzz N SEED %ld (make fuzz SEED=.. CALLS=.. FROM=%ld)",
		first < 0 ? 0 : first, first < 0 ? 0 : first);
}

static void judge_child(int i, int status, int hung, struct slot *sl,
			long n, unsigned long seed)
{
	sl->report[sizeof sl->report - 1] = 0;
	if (WIFEXITED(status) && WEXITSTATUS(status) == 0 &&
	    !strncmp(sl->report, "alive", 5)) {
		ut_check(1, __FILE__, __LINE__, "child alive");
		ut_note("seed %lu cpu %d: %s", seed, sl->cpu, sl->report);
		return;
	}
	const char *what = hung ? "hung" : WIFSIGNALED(status) ? "was killed" : "broke";
	char sig[32] = "";
	if (WIFSIGNALED(status))
		snprintf(sig, sizeof sig, " by signal %d", WTERMSIG(status));
	ut_check(0, __FILE__, __LINE__,
		 "seed %lu child %d on cpu %d %s%s (status 0x%x, \"%s\") at call %ld "
		 "of %ld: syscall %ld (%#lx, %#lx, %#lx, %#lx, %#lx, %#lx)",
		 seed, i, sl->cpu, what, sig, status, sl->report, sl->index, n,
		 sl->number, sl->args[0], sl->args[1], sl->args[2], sl->args[3],
		 sl->args[4], sl->args[5]);
	show_recent(sl);
}

#include "ut_fuzz_checks.h"

int main(int argc, char **argv)
{
	long n = argc > 1 ? atol(argv[1]) : 3000;
	unsigned long seed = argc > 2 ? strtoul(argv[2], NULL, 0) : 1;
	long from = argc > 3 ? atol(argv[3]) : 0;
	ut_init(argc, argv);
	ut_alarm(0); /* reap_all guards against hangs by progress instead */
	scratch = ut_scratch();

	/* The CPUs: as many children as we may run on (how musl's sysconf
	   counts them, too). */
	cpu_set_t set;
	CPU_ZERO(&set);
	CHECK_OK(sched_getaffinity(0, sizeof set, &set));
	int cpus[MAX_CHILDREN], ncpu = 0;
	for (int c = 0; c < CPU_SETSIZE && ncpu < MAX_CHILDREN; c++)
		if (CPU_ISSET(c, &set))
			cpus[ncpu++] = c;
	CHECK(ncpu >= 1);
	CHECK_EQ(sysconf(_SC_NPROCESSORS_ONLN), CPU_COUNT(&set));

	CHECK_OK(mkdir("check", 0777));
	CHECK_OK(chmod("check", 0777));
	for (int i = 0; i < ncpu; i++) {
		char dir[16];
		snprintf(dir, sizeof dir, "play%d", i);
		CHECK_OK(mkdir(dir, 0777));
		CHECK_OK(chmod(dir, 0777));
	}
	struct slot *slots = mmap(NULL, MAX_CHILDREN * sizeof *slots,
				  PROT_READ | PROT_WRITE,
				  MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	CHECK(slots != MAP_FAILED);
	char *region = mmap(NULL, BUF_SIZE + 2 * 4096, PROT_READ | PROT_WRITE,
			    MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	CHECK(region != MAP_FAILED);
	if (slots == MAP_FAILED || region == MAP_FAILED || ncpu < 1)
		return ut_done();
	buf = region;
	namepg = region + BUF_SIZE;
	CHECK_OK(mprotect(region + BUF_SIZE + 4096, 4096, PROT_NONE)); /* guard */
	memset(slots, 0, MAX_CHILDREN * sizeof *slots);

	long objects[NOBJECTS];
	int have_objects = kernel_objects(objects) == 0;
	pid_t pids[MAX_CHILDREN];
	int status[MAX_CHILDREN], hung[MAX_CHILDREN] = { 0 }, nchild = 0;
	for (int i = 0; i < ncpu; i++) {
		pid_t pid = start_child(n, from, &slots[i], i, cpus[i], seed);
		CHECK(pid > 0);
		if (pid <= 0)
			break;
		pids[nchild++] = pid;
	}
	reap_all(pids, status, hung, slots, nchild);
	for (int i = 0; i < nchild; i++)
		judge_child(i, status[i], hung[i], &slots[i], n, seed);

	/* The check afterwards: the kernel still works for everyone. */
	for (int i = 0; i < nchild; i++)
		CHECK_ERR(kill(pids[i], 0), ESRCH); /* reaped and gone */
	check_no_leaks(objects, have_objects);
	check_kernel_works(nchild);
	check_every_cpu(cpus, ncpu);
	return ut_done();
}

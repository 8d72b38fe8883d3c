/*
 * ut_fuzz_types.h: argument types for the random-syscall program
 * (ut_fuzz.c includes this once; it is a part of that program, not a
 * library).
 *
 * In the manner of syzkaller's descriptions, each call the fuzzing knows
 * well has a type for each argument: a descriptor (one the fuzzing
 * opened, usually), a path name, a buffer, a length, open flags, a mode,
 * an offset, protections, mapping flags, a whence, a directory descriptor
 * or a signal.  A typed argument is valid most of the time and wrong in
 * a chosen way now and then (a closed descriptor, a length past the
 * buffer, unknown flag bits), which reaches deeper into a call than
 * random words, which fail at the first check.  Calls without a
 * description get random words (arg() in ut_fuzz.c).
 */
#ifndef UT_FUZZ_TYPES_H
#define UT_FUZZ_TYPES_H

enum arg_type {
	T_ANY = 0, /* a random word, arg() */
	T_FD,      /* a descriptor */
	T_PATH,    /* a path name */
	T_BUF,     /* a buffer of BUF_SIZE bytes */
	T_LEN,     /* a length for T_BUF */
	T_OFLAGS,  /* open(2) flags */
	T_MODE,    /* permission bits */
	T_OFF,     /* a file offset */
	T_PROT,    /* PROT_* */
	T_MFLAGS,  /* MAP_* */
	T_WHENCE,  /* SEEK_* */
	T_DIRFD,   /* AT_FDCWD or a descriptor */
	T_ZERO,    /* 0, usually */
};

struct call_desc {
	int nr;
	unsigned char arg[6];
};

/* The described calls (x86-64 numbers). */
static const struct call_desc descs[] = {
	{ 0, { T_FD, T_BUF, T_LEN } },                  /* read */
	{ 1, { T_FD, T_BUF, T_LEN } },                  /* write */
	{ 2, { T_PATH, T_OFLAGS, T_MODE } },            /* open */
	{ 3, { T_FD } },                                /* close */
	{ 4, { T_PATH, T_BUF } },                       /* stat */
	{ 5, { T_FD, T_BUF } },                         /* fstat */
	{ 6, { T_PATH, T_BUF } },                       /* lstat */
	{ 8, { T_FD, T_OFF, T_WHENCE } },               /* lseek */
	{ 9, { T_ZERO, T_LEN, T_PROT, T_MFLAGS, T_FD, T_OFF } }, /* mmap */
	{ 17, { T_FD, T_BUF, T_LEN, T_OFF } },          /* pread64 */
	{ 18, { T_FD, T_BUF, T_LEN, T_OFF } },          /* pwrite64 */
	{ 21, { T_PATH, T_MODE } },                     /* access */
	{ 32, { T_FD } },                               /* dup */
	{ 33, { T_FD, T_FD } },                         /* dup2 */
	{ 40, { T_FD, T_FD, T_ZERO, T_LEN } },          /* sendfile */
	{ 74, { T_FD } },                               /* fsync */
	{ 75, { T_FD } },                               /* fdatasync */
	{ 76, { T_PATH, T_OFF } },                      /* truncate */
	{ 77, { T_FD, T_OFF } },                        /* ftruncate */
	{ 78, { T_FD, T_BUF, T_LEN } },                 /* getdents */
	{ 80, { T_PATH } },                             /* chdir */
	{ 81, { T_FD } },                               /* fchdir */
	{ 82, { T_PATH, T_PATH } },                     /* rename */
	{ 83, { T_PATH, T_MODE } },                     /* mkdir */
	{ 84, { T_PATH } },                             /* rmdir */
	{ 85, { T_PATH, T_MODE } },                     /* creat */
	{ 86, { T_PATH, T_PATH } },                     /* link */
	{ 87, { T_PATH } },                             /* unlink */
	{ 88, { T_PATH, T_PATH } },                     /* symlink */
	{ 89, { T_PATH, T_BUF, T_LEN } },               /* readlink */
	{ 90, { T_PATH, T_MODE } },                     /* chmod */
	{ 91, { T_FD, T_MODE } },                       /* fchmod */
	{ 217, { T_FD, T_BUF, T_LEN } },                /* getdents64 */
	{ 257, { T_DIRFD, T_PATH, T_OFLAGS, T_MODE } }, /* openat */
	{ 258, { T_DIRFD, T_PATH, T_MODE } },           /* mkdirat */
	{ 262, { T_DIRFD, T_PATH, T_BUF, T_ZERO } },    /* newfstatat */
	{ 263, { T_DIRFD, T_PATH, T_ZERO } },           /* unlinkat */
	{ 264, { T_DIRFD, T_PATH, T_DIRFD, T_PATH } },  /* renameat */
	{ 265, { T_DIRFD, T_PATH, T_DIRFD, T_PATH, T_ZERO } }, /* linkat */
	{ 293, { T_BUF, T_OFLAGS } },                   /* pipe2 */
};
#define NDESCS ((int)(sizeof descs / sizeof descs[0]))

/* Calls whose result is a new descriptor, remembered for T_FD. */
static int returns_fd(long nr)
{
	return nr == 2 || nr == 32 || nr == 33 || nr == 85 || nr == 257 ||
	       nr == 292 /* dup3 */;
}

/* The descriptors the fuzzing opened lately. */
#define FD_RING 16
static int fd_ring[FD_RING];
static int nfds;

static void remember_fd(int fd)
{
	fd_ring[nfds % FD_RING] = fd;
	nfds++;
}

static void forget_fds(void)
{
	nfds = 0;
}

static const struct call_desc *desc_of(long nr)
{
	for (int i = 0; i < NDESCS; i++)
		if (descs[i].nr == nr)
			return &descs[i];
	return NULL;
}

static long typed_fd(void)
{
	uint64_t r = next();
	if (r % 8 < 6 && nfds > 0)
		return fd_ring[(r >> 8) % (nfds < FD_RING ? nfds : FD_RING)];
	if (r % 8 == 6)
		return (long)((r >> 8) % 8); /* the standard ones and a few more */
	static const long wrong[] = { -1, 1023, 1024, 1L << 31, -100 };
	return wrong[(r >> 8) % 5];
}

static long typed_len(void)
{
	uint64_t r = next();
	switch (r % 8) {
	case 0: return 0;
	case 1: return 1;
	case 2: return (long)((r >> 8) % 512);
	case 3: return 4096;
	case 4: return (long)((r >> 8) % BUF_SIZE);
	case 5: return BUF_SIZE;
	case 6: return BUF_SIZE + 4096;    /* runs into the guard page */
	default: return (long)(r >> 8);     /* huge */
	}
}

static long typed_oflags(void)
{
	static const long bits[] = { O_CREAT, O_EXCL, O_TRUNC, O_APPEND, O_NONBLOCK,
				     O_DIRECTORY, O_NOFOLLOW, O_CLOEXEC, O_SYNC,
				     O_DSYNC, O_NOCTTY, O_PATH, O_TMPFILE };
	uint64_t r = next();
	long f = (long)(r % 3); /* O_RDONLY, O_WRONLY, O_RDWR */
	for (unsigned i = 0; i < sizeof bits / sizeof bits[0]; i++)
		if ((r >> (8 + 2 * i)) % 4 == 0)
			f |= bits[i];
	if (r % 16 == 15)
		f |= (long)(next() & 0xffffffffL); /* unknown bits too */
	return f;
}

static long typed_off(void)
{
	uint64_t r = next();
	static const long odd[] = { -1, 1L << 31, 1L << 40, 0x7fffffffffffffffL,
				    1 << 20, (1 << 20) + 1 };
	if (r % 4 == 0)
		return odd[(r >> 8) % 6];
	return (long)((r >> 8) % (3 * BUF_SIZE));
}

static long typed_mflags(void)
{
	uint64_t r = next();
	long f = r % 2 ? MAP_PRIVATE : MAP_SHARED;
	if (r % 8 < 5)
		f |= MAP_ANONYMOUS;
	if (r % 32 == 31)
		f |= (long)(next() & 0xffffffL) & ~(long)(MAP_FIXED | 0x100000 |
							  MAP_POPULATE | MAP_LOCKED);
	return f;
}

static long typed_arg(int type)
{
	uint64_t r;
	switch (type) {
	case T_FD:
		return typed_fd();
	case T_PATH:
		return (long)(namepg + 64 * (next() % NNAMES));
	case T_BUF:
		return next() % 16 ? (long)buf : bad_pointer();
	case T_LEN:
		return typed_len();
	case T_OFLAGS:
		return typed_oflags();
	case T_MODE:
		r = next();
		return r % 8 ? (long)(r % 01000) : (long)(r & 0xffffffffL);
	case T_OFF:
		return typed_off();
	case T_PROT:
		r = next();
		return r % 8 ? (long)(r % 8) : (long)(r & 0xffffffffL);
	case T_MFLAGS:
		return typed_mflags();
	case T_WHENCE:
		return (long)(next() % 6); /* SET, CUR, END, DATA, HOLE, bad */
	case T_DIRFD:
		return next() % 2 ? AT_FDCWD : typed_fd();
	case T_ZERO:
		return next() % 8 ? 0 : arg();
	default:
		return arg();
	}
}

/* Fill a[] for call nr: typed three times in four when nr has a
   description, random words otherwise. */
static void choose_args(long nr, long a[6])
{
	const struct call_desc *d = desc_of(nr);
	int typed = d && next() % 4 != 0;
	for (int k = 0; k < 6; k++)
		a[k] = typed ? typed_arg(d->arg[k]) : arg();
}

#endif

/*
 * /proc/net/unix: every AF_UNIX socket, one line each, in the format of
 * Linux's unix_seq_show (net/unix/af_unix.c), which busybox's netstat -x
 * and lsof read:
 *
 *   Num       RefCount Protocol Flags    Type St Inode Path
 *   0000000000000000: 00000002 00000000 00010000 0001 01 12345 /run/x
 *
 * Num is the kernel's address, which Linux shows to an unprivileged reader
 * as zeros (kptr_restrict), as this file always does; Flags is
 * __SO_ACCEPTCON (0x10000) for a listener; Type is SOCK_STREAM (1),
 * SOCK_DGRAM (2) or SOCK_SEQPACKET (5); St is SS_CONNECTED (3) for a
 * connected socket and SS_UNCONNECTED (1) otherwise while its file is
 * open, SS_DISCONNECTING (4) once closed; Inode is what fstat shows; Path
 * is the bound name, an abstract one after '@' with its NUL bytes shown
 * as '@'.
 *
 * Locks: none of its own.  The sockets are held from a snapshot of the
 * list of every socket (unix_snapshot, under unix_all_lock), then each is
 * read under its so_lock; its name is constant once bound.
 */
#include <kern/net/unix_impl.h>
#include <kern/procfs/procfs.h>
#include <kern/lib/kprintf.h>
#include <kern/lib/string.h>
#include <kern/lib/errno.h>

#define SO_ACCEPTCON    0x10000     /* Linux's __SO_ACCEPTCON */
#define SS_UNCONNECTED  1
#define SS_CONNECTED    3
#define SS_DISCONNECTING 4

/* The St column (so_lock held). */
static int unix_proc_state(struct socket *so)
{
    struct unpcb *u = sotounp(so);
    if (u->u_released)
        return SS_DISCONNECTING;
    return u->u_peer ? SS_CONNECTED : SS_UNCONNECTED;
}

/* The Path column: nothing for an unbound socket. */
static void name_column(struct sbuf *sb, const struct unix_name *n)
{
    if (!n)
        return;
    const char *path = n->n_addr + 2;
    size_t len = n->n_len > 2 ? n->n_len - 2 : 0;
    sbuf_printf(sb, " ");
    if (n->n_node) {
        sbuf_add(sb, path, strnlen(path, len));
        return;
    }
    for (size_t i = 0; i < len; i++)
        sbuf_add(sb, path[i] ? &path[i] : "@", 1);
}

static void unix_line(struct sbuf *sb, struct socket *so)
{
    struct unpcb *u = sotounp(so);
    mutex_enter(&so->so_lock);
    int state = unix_proc_state(so);
    int flags = so->so_listening ? SO_ACCEPTCON : 0;
    struct unix_name *name = u->u_name;
    mutex_exit(&so->so_lock);
    /* Our own reference is not counted. */
    int32_t refs = __atomic_load_n(&so->so_vn.v_count, __ATOMIC_RELAXED) - 1;
    sbuf_printf(sb, "0000000000000000: %08X %08X %08X %04X %02X %5lu", (unsigned)refs, 0u,
                (unsigned)flags, (unsigned)so->so_type, (unsigned)state,
                (unsigned long)so->so_ino);
    name_column(sb, name);
    sbuf_printf(sb, "\n");
}

int procfs_net_unix(struct sbuf *sb)
{
    sbuf_printf(sb, "Num       RefCount Protocol Flags    Type St Inode Path\n");
    struct sockvec sv = { 0 };
    unix_snapshot(&sv);
    for (int i = 0; i < sv.sv_n; i++)
        unix_line(sb, sv.sv_v[i]);
    sockvec_free(&sv);
    return sv.sv_n < 0 ? -ENOMEM : 0;
}

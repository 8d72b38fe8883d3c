/*
 * The kernel message log: every line kprintf prints is kept, with the
 * time since boot, in a ring of the most recent KMSG_RECORDS lines
 * (kern/arch/console.c).  syslog(2) (klogctl) reads it in Linux's text
 * format, "<6>[    1.234567] text", and /dev/kmsg one record per read in
 * Linux's /dev/kmsg format, "6,SEQ,USEC,-;text".
 *
 * Lock: the console lock (a raw spin lock, a leaf) guards the ring; the
 * readers copy out under it into kernel buffers only.
 */
#ifndef KERN_ARCH_KMSG_H
#define KERN_ARCH_KMSG_H

#include <kern/lib/types.h>

#define KMSG_RECORDS 1024       /* lines kept */
#define KMSG_TEXT    200        /* bytes of one line kept (longer lines are cut) */
/* What syslog's SYSLOG_ACTION_SIZE_BUFFER reports: enough for every
 * record in the syslog format. */
#define KMSG_BUFFER_SIZE (KMSG_RECORDS * (KMSG_TEXT + 24))

/* Copy the newest records that fit into buf (n bytes) in syslog's text
 * format, oldest first; from is the first sequence number wanted (0: all
 * kept).  Returns the bytes written; *next gets the sequence number after
 * the last record copied. */
size_t kmsg_read_text(char *buf, size_t n, uint64_t from, uint64_t *next);
/* Bytes of records from sequence number from on, in that format. */
size_t kmsg_text_size(uint64_t from);
/* One record, seq, in /dev/kmsg's format: its length, or -EPIPE when it
 * has been overwritten (*next gets the oldest kept), -EAGAIN when it has
 * not been written yet, -EINVAL when buf is too small.  *next gets the
 * sequence number to read next. */
long kmsg_read_record(uint64_t seq, char *buf, size_t n, uint64_t *next);
/* The sequence numbers of the oldest record kept and of the next one. */
void kmsg_bounds(uint64_t *first, uint64_t *next);

#endif

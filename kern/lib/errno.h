/*
 * Error numbers: the Linux x86-64 values, so that system calls (a later
 * issue) can return them unchanged.  Kernel functions return 0 or a
 * negative errno (-ENOENT); pointers that can fail come with an int *err.
 */
#ifndef KERN_ERRNO_H
#define KERN_ERRNO_H

#define EPERM           1
#define ENOENT          2
#define ESRCH           3
#define EINTR           4
#define EIO             5
#define ENXIO           6
#define E2BIG           7
#define ENOEXEC         8
#define EBADF           9
#define ECHILD          10
#define EAGAIN          11
#define ENOMEM          12
#define EACCES          13
#define EFAULT          14
#define ENOTBLK         15
#define EBUSY           16
#define EEXIST          17
#define EXDEV           18
#define ENODEV          19
#define ENOTDIR         20
#define EISDIR          21
#define EINVAL          22
#define ENFILE          23
#define EMFILE          24
#define ENOTTY          25
#define ETXTBSY         26
#define EFBIG           27
#define ENOSPC          28
#define ESPIPE          29
#define EROFS           30
#define EMLINK          31
#define EPIPE           32
#define EDOM            33
#define ERANGE          34
#define EDEADLK         35
#define ENAMETOOLONG    36
#define ENOLCK          37
#define ENOSYS          38
#define ENOTEMPTY       39
#define ELOOP           40
#define ENOMSG          42
#define EIDRM           43
#define ENODATA         61      /* xattr: no such attribute */
#define ENONET          64      /* ICMP: host isolated */
#define EOVERFLOW       75
#define ELIBBAD         80      /* exec: the program's interpreter is corrupt */
#define ENOTSOCK        88      /* sockets (kern/net) */
#define EDESTADDRREQ    89
#define EMSGSIZE        90
#define EPROTOTYPE      91
#define ENOPROTOOPT     92
#define EPROTONOSUPPORT 93
#define ESOCKTNOSUPPORT 94
#define EOPNOTSUPP      95
#define EAFNOSUPPORT    97
#define EADDRINUSE      98
#define EADDRNOTAVAIL   99
#define ENETUNREACH     101
#define ECONNABORTED    103
#define ENOBUFS         105
#define EISCONN         106
#define ENOTCONN        107
#define ECONNREFUSED    111
#define EHOSTDOWN       112
#define EHOSTUNREACH    113
#define EALREADY        114
#define EINPROGRESS     115
#define ECONNRESET      104
#define ETIMEDOUT       110
#define EUCLEAN         117     /* "structure needs cleaning": a corrupted file system */

#endif

/*
 * net.h -- loopback sockets for the network micro-benchmarks (issue 35):
 * tcp_lat, tcp_bw, tcp_crr and udp_lat.  Every call goes through
 * syscall(), as bench.h asks.  The loopback interface must be up (the
 * Linux peer's init leaves it down: bench/ratio.py --set net raises it).
 */
#ifndef BENCH_NET_H
#define BENCH_NET_H

#include <netinet/in.h>
#include <netinet/tcp.h>
#include <sys/socket.h>

/* 127.0.0.1:port (network order). */
static inline struct sockaddr_in net_loopback(unsigned short port)
{
	struct sockaddr_in a;

	memset(&a, 0, sizeof a);
	a.sin_family = AF_INET;
	a.sin_port = port;
	a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	return a;
}

/* A socket of type bound to 127.0.0.1 on a port the kernel chose (and
 * listening, for SOCK_STREAM); its port in *port.  -errno on failure. */
static inline int net_bound(int type, unsigned short *port)
{
	struct sockaddr_in a = net_loopback(0);
	socklen_t len = sizeof a;
	int fd = (int)syscall(SYS_socket, AF_INET, type, 0);

	*port = 0;

	if (fd < 0 || syscall(SYS_bind, fd, &a, sizeof a) < 0 ||
	    (type == SOCK_STREAM && syscall(SYS_listen, fd, 128) < 0) ||
	    syscall(SYS_getsockname, fd, &a, &len) < 0)
		return -errno;
	*port = a.sin_port;
	return fd;
}

/* A TCP connection to 127.0.0.1:port, with TCP_NODELAY when nodelay.
 * -errno on failure. */
static inline int net_connect(unsigned short port, int nodelay)
{
	struct sockaddr_in a = net_loopback(port);
	int fd = (int)syscall(SYS_socket, AF_INET, SOCK_STREAM, 0);
	int one = 1;

	if (fd < 0 || syscall(SYS_connect, fd, &a, sizeof a) < 0)
		return -errno;
	if (nodelay && syscall(SYS_setsockopt, fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one) < 0)
		return -errno;
	return fd;
}

/* A TCP connection over loopback, its ends in *client and *server
 * (TCP_NODELAY on both when nodelay); the listener is closed.  0 or
 * -errno. */
static inline int net_pair(int nodelay, int *client, int *server)
{
	unsigned short port;
	int one = 1;
	int l = net_bound(SOCK_STREAM, &port);

	if (l < 0)
		return l;
	*client = net_connect(port, nodelay);
	if (*client < 0)
		return *client;
	*server = (int)syscall(SYS_accept, l, NULL, NULL);
	if (*server < 0 || (nodelay && syscall(SYS_setsockopt, *server, IPPROTO_TCP, TCP_NODELAY,
						 &one, sizeof one) < 0))
		return -errno;
	syscall(SYS_close, l);
	return 0;
}

#endif

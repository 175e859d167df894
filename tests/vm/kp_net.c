// SPDX-License-Identifier: MIT
// kp_proc's net role (kp_proc.h): TCP listeners and an established pair,
// UDP sockets bound and connected, raw ICMP and ICMPv6 sockets and unix
// sockets of every type, each at the fd the suite expects, then it sleeps.
// Before, it opens 2 * FREED TCP listeners, closes every other one and
// writes the closed ones' addresses (/proc/net/tcp's, matched by inode) to
// WORK/net.freed: free objects of the TCP cache (never merged with another:
// SLAB_TYPESAFE_BY_RCU) for the suite's whatis, in slabs the sockets kept
// open (moved to fds KEPT_FD and up) keep from going back to the page
// allocator.
#define _GNU_SOURCE
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <linux/capability.h>
#include <linux/filter.h>
#include <linux/seccomp.h>
#include <arpa/inet.h>
#include <ifaddrs.h>
#include <net/if.h>
#include <netinet/in.h>
#include <sched.h>
#include <signal.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/mount.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <unistd.h>

#include "kp_proc.h"

// inet_sock(FAMILY, TYPE, PROTO, ADDR, PORT, WANT): a socket at fd WANT,
// bound to ADDR:PORT unless ADDR is NULL.
static int inet_sock(int family, int type, int proto, const char *addr, int port, int want)
{
	struct sockaddr_storage ss = {0};
	socklen_t len;
	int fd = socket(family, type, proto), one = 1;

	if (fd < 0)
		fail("net", "socket");
	setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
	if (family == AF_INET6)
		setsockopt(fd, IPPROTO_IPV6, IPV6_V6ONLY, &one, sizeof(one));
	if (addr) {
		if (family == AF_INET) {
			struct sockaddr_in *sin = (struct sockaddr_in *)&ss;

			sin->sin_family = AF_INET;
			sin->sin_port = htons((uint16_t)port);
			len = sizeof(*sin);
			if (inet_pton(AF_INET, addr, &sin->sin_addr) != 1)
				fail("net", addr);
		} else {
			struct sockaddr_in6 *sin6 = (struct sockaddr_in6 *)&ss;

			sin6->sin6_family = AF_INET6;
			sin6->sin6_port = htons((uint16_t)port);
			len = sizeof(*sin6);
			if (inet_pton(AF_INET6, addr, &sin6->sin6_addr) != 1)
				fail("net", addr);
		}
		// An IPv6 address is tentative until the kernel's duplicate
		// address detection work has run (at once on NOARP kp0).
		for (int i = 0; bind(fd, (struct sockaddr *)&ss, len) < 0; i++) {
			if (errno != EADDRNOTAVAIL || i == 50)
				fail("net", addr);
			usleep(100000);
		}
	}
	if (fd != want) {
		if (dup3(fd, want, 0) < 0)
			fail("net", "dup3");
		close(fd);
	}
	return want;
}

static void connect_to(int fd, const char *addr, int port)
{
	struct sockaddr_in sin = {.sin_family = AF_INET, .sin_port = htons((uint16_t)port)};

	if (inet_pton(AF_INET, addr, &sin.sin_addr) != 1 || connect(fd, (struct sockaddr *)&sin, sizeof(sin)) < 0)
		fail("net", "connect");
}

static int unix_sock(int type, const char *path, bool abstract, int want)
{
	struct sockaddr_un sun = {.sun_family = AF_UNIX};
	socklen_t len = offsetof(struct sockaddr_un, sun_path) + strlen(path) + (abstract ? 1 : 0);
	int fd = socket(AF_UNIX, type, 0);

	if (fd < 0)
		fail("net", "unix socket");
	// An abstract name starts with a NUL ("@name" in /proc/net/unix).
	strcpy(sun.sun_path + (abstract ? 1 : 0), path);
	if (!abstract)
		unlink(path);
	if (bind(fd, (struct sockaddr *)&sun, len) < 0)
		fail("net", path);
	if (fd != want) {
		if (dup3(fd, want, 0) < 0)
			fail("net", "dup3");
		close(fd);
	}
	return want;
}

#define FREED 8
#define KEPT_FD 200

// The socket address /proc/net/tcp gives for inode ino (0: none). Under
// kernel.kptr_restrict=1 its %pK is the real address to root.
static unsigned long long tcp_address(unsigned long ino)
{
	char line[512];
	unsigned long long sk = 0;
	FILE *f = fopen("/proc/net/tcp", "r");

	if (!f)
		fail("net", "/proc/net/tcp");
	while (!sk && fgets(line, sizeof(line), f)) {
		unsigned long i;
		unsigned long long a;

		// sl local rem st tx:rx tr:tm retrnsmt uid timeout inode ref pointer ...
		if (sscanf(line, " %*d: %*x:%*x %*x:%*x %*x %*x:%*x %*x:%*x %*x %*u %*d %lu %*d %llx",
			   &i, &a) == 2 && i == ino)
			sk = a;
	}
	fclose(f);
	return sk;
}

static void freed_tcp(void)
{
	int fds[2 * FREED];
	unsigned long long sk[2 * FREED];
	FILE *restrict_file = fopen("/proc/sys/kernel/kptr_restrict", "r+");
	char old[8] = "0";
	FILE *out;

	if (!restrict_file || !fgets(old, sizeof(old), restrict_file))
		fail("net", "kptr_restrict");
	rewind(restrict_file);
	fputs("1\n", restrict_file);
	fflush(restrict_file);
	for (int i = 0; i < 2 * FREED; i++) {
		struct sockaddr_in sin = {.sin_family = AF_INET, .sin_port = htons((uint16_t)(7110 + i)),
					  .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
		struct stat st;

		fds[i] = socket(AF_INET, SOCK_STREAM, 0);
		if (fds[i] < 0 || fstat(fds[i], &st) < 0)
			fail("net", "freed socket");
		// Listening, so that /proc/net/tcp lists it.
		if (bind(fds[i], (struct sockaddr *)&sin, sizeof(sin)) < 0 || listen(fds[i], 1) < 0)
			fail("net", "listen freed socket");
		sk[i] = tcp_address(st.st_ino);
	}
	rewind(restrict_file);
	fputs(old, restrict_file);
	fclose(restrict_file);
	out = fopen(WORK "/net.freed", "w");
	if (!out)
		fail("net", WORK "/net.freed");
	for (int i = 0; i < 2 * FREED; i++) {
		if (i % 2 && dup3(fds[i], KEPT_FD + i, 0) < 0)
			fail("net", "dup3 kept socket");
		close(fds[i]);
		if (i % 2 == 0 && sk[i])
			fprintf(out, "tcp %llx\n", sk[i]);
	}
	fclose(out);
}

void role_net(void)
{
	int p[2], fd;
	pid_t child;
	char c;

	prctl(PR_SET_NAME, "kp_net", 0, 0, 0);
	mkdir(WORK, 0755);
	freed_tcp();
	// fds 3-15, in the order of the header
	if (listen(inet_sock(AF_INET, SOCK_STREAM, 0, "10.77.0.1", 7100, 3), 4) < 0 ||
	    listen(inet_sock(AF_INET6, SOCK_STREAM, 0, "::", 7101, 4), 4) < 0 ||
	    listen(inet_sock(AF_INET, SOCK_STREAM, 0, "127.0.0.1", 7102, 5), 4) < 0)
		fail("net", "listen");
	connect_to(inet_sock(AF_INET, SOCK_STREAM, 0, NULL, 0, 6), "127.0.0.1", 7102);
	fd = accept(5, NULL, NULL);
	if (fd < 0 || (fd != 7 && (dup3(fd, 7, 0) < 0 || close(fd) < 0)))
		fail("net", "accept");
	inet_sock(AF_INET, SOCK_DGRAM, 0, "10.77.0.1", 7103, 8);
	connect_to(inet_sock(AF_INET, SOCK_DGRAM, 0, "127.0.0.1", 0, 9), "10.77.0.1", 7103);
	inet_sock(AF_INET6, SOCK_DGRAM, 0, "fd77::1", 7104, 10);
	inet_sock(AF_INET, SOCK_RAW, IPPROTO_ICMP, NULL, 0, 11);
	inet_sock(AF_INET6, SOCK_RAW, IPPROTO_ICMPV6, NULL, 0, 12);
	unix_sock(SOCK_DGRAM, WORK "/dgram", false, 13);
	if (listen(unix_sock(SOCK_STREAM, "kp_abstract", true, 14), 4) < 0)
		fail("net", "listen unix");
	if (pipe(p) < 0)
		fail("net", "pipe");
	child = fork();
	if (child < 0)
		fail("net", "fork");
	if (child == 0) {
		// Keeps the UDP socket of 7103 (fd 8) only.
		prctl(PR_SET_NAME, "kp_netchild", 0, 0, 0);
		close(READY_FD);
		close(p[0]);
		for (int i = 3; i <= 14; i++)
			if (i != 8)
				close(i);
		if (write(p[1], "r", 1) != 1)
			_exit(1);
		close(p[1]);
		sleep_forever();
	}
	close(p[1]);
	if (read(p[0], &c, 1) != 1)
		fail("net", "child not ready");
	close(p[0]);
	ready("net %d\nnetchild %d\n", getpid(), child);
	sleep_forever();
}

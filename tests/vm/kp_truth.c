// SPDX-License-Identifier: MIT
// The readings kp_proc writes for the suite (kp_proc.h): what the guest's
// /proc says of the workload's processes and of the system, each file
// copied as the kernel printed it, for tests/vm/suite/process.py and
// system.py to compare kpeek with.
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
#include <stdint.h>
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

// ---------------------------------------------------------------- truth

static int copy_file(const char *from, const char *to)
{
	char buf[65536];
	int in = open(from, O_RDONLY), out;
	ssize_t n;

	if (in < 0)
		return -1;
	out = open(to, O_WRONLY | O_CREAT | O_TRUNC, 0644);
	if (out < 0) {
		close(in);
		return -1;
	}
	while ((n = read(in, buf, sizeof(buf))) > 0)
		if (write(out, buf, (size_t)n) != n)
			break;
	close(in);
	close(out);
	return n < 0 ? -1 : 0;
}

static ssize_t read_all(const char *path, char *buf, size_t size)
{
	int fd = open(path, O_RDONLY);
	size_t len = 0;
	ssize_t n;

	if (fd < 0)
		return -1;
	while (len < size && (n = read(fd, buf + len, size - len)) > 0)
		len += (size_t)n;
	close(fd);
	return (ssize_t)len;
}

static void hex(FILE *f, const char *s, ssize_t n)
{
	for (ssize_t i = 0; i < n; i++)
		fprintf(f, "%02x", (unsigned char)s[i]);
}

static int by_number(const struct dirent **a, const struct dirent **b)
{
	long x = atol((*a)->d_name), y = atol((*b)->d_name);

	return x < y ? -1 : x > y;
}

static int numeric(const struct dirent *d)
{
	return d->d_name[0] >= '0' && d->d_name[0] <= '9';
}

static void truth_fds(FILE *f, int pid)
{
	struct dirent **ents;
	char path[300], target[4096], info[4096];
	int n;

	snprintf(path, sizeof(path), "/proc/%d/fd", pid);
	n = scandir(path, &ents, numeric, by_number);
	for (int i = 0; i < n; i++) {
		struct stat st;
		ssize_t len;

		snprintf(path, sizeof(path), "/proc/%d/fd/%s", pid, ents[i]->d_name);
		len = readlink(path, target, sizeof(target) - 1);
		target[len < 0 ? 0 : len] = 0;
		fprintf(f, "== %s %s\n", ents[i]->d_name, target);
		if (stat(path, &st) == 0)
			fprintf(f, "stat-ino:\t%lu\nstat-mode:\t0%o\n", (unsigned long)st.st_ino,
				(unsigned)st.st_mode);
		snprintf(path, sizeof(path), "/proc/%d/fdinfo/%s", pid, ents[i]->d_name);
		len = read_all(path, info, sizeof(info));
		if (len > 0)
			fwrite(info, 1, (size_t)len, f);
		free(ents[i]);
	}
	if (n >= 0)
		free(ents);
}

static void truth_ns(FILE *f, int pid)
{
	static const char *const names[] = {"cgroup", "ipc", "mnt", "net", "pid", "pid_for_children",
					    "time", "time_for_children", "user", "uts"};
	char path[128], target[256];

	for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++) {
		ssize_t len;

		snprintf(path, sizeof(path), "/proc/%d/ns/%s", pid, names[i]);
		len = readlink(path, target, sizeof(target) - 1);
		if (len > 0)
			fprintf(f, "%s %.*s\n", names[i], (int)len, target);
	}
}

static void truth_cmdlines(const char *dir, const char *tag)
{
	struct dirent **ents;
	char path[4096], buf[65536];
	int n = scandir("/proc", &ents, numeric, by_number);
	FILE *f;

	snprintf(path, sizeof(path), "%s/proc.%s.cmdlines", dir, tag);
	f = fopen(path, "w");
	for (int i = 0; f && i < n; i++) {
		ssize_t c, l;

		snprintf(path, sizeof(path), "/proc/%s/comm", ents[i]->d_name);
		c = read_all(path, buf, sizeof(buf));
		if (c > 0 && buf[c - 1] == '\n')
			c--;
		fprintf(f, "%s ", ents[i]->d_name);
		hex(f, buf, c);
		snprintf(path, sizeof(path), "/proc/%s/cmdline", ents[i]->d_name);
		l = read_all(path, buf, sizeof(buf));
		fputc(' ', f);
		hex(f, buf, l);
		fputc('\n', f);
	}
	for (int i = 0; i < n; i++)
		free(ents[i]);
	if (n >= 0)
		free(ents);
	if (f)
		fclose(f);
}

// The page frames under a process's environment area (env_start..env_end,
// /proc/PID/stat fields 50-51; at most 64 pages) as the kernel itself says,
// one line per page: "VADDR PFN KPAGEFLAGS" (hex) from /proc/PID/pagemap
// (bit 63 present, bits 0-54 the frame; root only) and /proc/kpageflags,
// or "VADDR -" for a page not present. For the suite's search and page
// checks (issue 29).
static void truth_envpages(FILE *f, int pid)
{
	char path[64], buf[4096];
	snprintf(path, sizeof(path), "/proc/%d/stat", pid);
	ssize_t n = read_all(path, buf, sizeof(buf) - 1);
	if (n <= 0)
		return;
	buf[n] = 0;
	// Fields after the comm's closing parenthesis start at field 3.
	char *p = strrchr(buf, ')');
	unsigned long long start = 0, end = 0;
	for (int field = 3; p && field <= 51; field++) {
		p = strchr(p + 1, ' ');
		if (p && field == 50)
			start = strtoull(p + 1, NULL, 10);
		if (p && field == 51)
			end = strtoull(p + 1, NULL, 10);
	}
	unsigned long long page = (unsigned long long)sysconf(_SC_PAGESIZE);
	snprintf(path, sizeof(path), "/proc/%d/pagemap", pid);
	int pm = open(path, O_RDONLY), kf = open("/proc/kpageflags", O_RDONLY);
	for (unsigned long long a = start & ~(page - 1), i = 0; a < end && i < 64; a += page, i++) {
		uint64_t entry = 0, flags = 0;
		uint64_t pfn = 0;
		if (pm >= 0 && pread(pm, &entry, 8, (off_t)(a / page * 8)) == 8 && entry >> 63)
			pfn = entry & ((1ULL << 55) - 1);
		if (pfn && kf >= 0 && pread(kf, &flags, 8, (off_t)(pfn * 8)) == 8)
			fprintf(f, "0x%llx 0x%llx 0x%llx\n", a, (unsigned long long)pfn,
				(unsigned long long)flags);
		else
			fprintf(f, "0x%llx -\n", a);
	}
	if (pm >= 0)
		close(pm);
	if (kf >= 0)
		close(kf);
}

int kp_truth(const char *dir, const char *tag, int npids, char **pids)
{
	static const char *const files[] = {"cmdline", "environ", "stat", "status", "maps", "mountinfo",
					    "cgroup", "sched", "stack"};
	char from[256], to[4096];

	for (int i = 0; i < npids; i++) {
		int pid = atoi(pids[i]);
		FILE *f;

		for (size_t k = 0; k < sizeof(files) / sizeof(files[0]); k++) {
			snprintf(from, sizeof(from), "/proc/%d/%s", pid, files[k]);
			snprintf(to, sizeof(to), "%s/proc.%s.%d.%s", dir, tag, pid, files[k]);
			copy_file(from, to);
		}
		snprintf(to, sizeof(to), "%s/proc.%s.%d.ns", dir, tag, pid);
		if ((f = fopen(to, "w"))) {
			truth_ns(f, pid);
			fclose(f);
		}
		snprintf(to, sizeof(to), "%s/proc.%s.%d.fds", dir, tag, pid);
		if ((f = fopen(to, "w"))) {
			truth_fds(f, pid);
			fclose(f);
		}
		snprintf(to, sizeof(to), "%s/proc.%s.%d.envpages", dir, tag, pid);
		if ((f = fopen(to, "w"))) {
			truth_envpages(f, pid);
			fclose(f);
		}
	}
	truth_cmdlines(dir, tag);
	return 0;
}

// ---------------------------------------------------------------- the system (issue 28)

static FILE *out_file(const char *dir, const char *tag, const char *name)
{
	char path[4096];

	snprintf(path, sizeof(path), "%s/sys.%s.%s", dir, tag, name);
	return fopen(path, "w");
}

// "PID INODE" of every socket in every process's fd table.
static void sys_sockfds(FILE *f)
{
	struct dirent **procs;
	int n = scandir("/proc", &procs, numeric, by_number);

	for (int i = 0; i < n; i++) {
		char path[600], target[64];
		struct dirent **fds;
		int m;

		snprintf(path, sizeof(path), "/proc/%s/fd", procs[i]->d_name);
		m = scandir(path, &fds, numeric, by_number);
		for (int j = 0; j < m; j++) {
			ssize_t len;
			unsigned long ino;

			snprintf(path, sizeof(path), "/proc/%s/fd/%s", procs[i]->d_name, fds[j]->d_name);
			len = readlink(path, target, sizeof(target) - 1);
			target[len < 0 ? 0 : len] = 0;
			if (sscanf(target, "socket:[%lu]", &ino) == 1)
				fprintf(f, "%s %lu\n", procs[i]->d_name, ino);
			free(fds[j]);
		}
		if (m >= 0)
			free(fds);
		free(procs[i]);
	}
	if (n >= 0)
		free(procs);
}

// "NAME TARGET" of every entry of /sys/kernel/slab: a merged cache's name is
// a link to the directory of the cache it shares (mm/slub.c sysfs_slab_alias()),
// a cache of its own a directory (TARGET = NAME).
static void sys_slablinks(FILE *f)
{
	struct dirent **e;
	int n = scandir("/sys/kernel/slab", &e, NULL, alphasort);

	for (int i = 0; i < n; i++) {
		char path[600], target[256];
		ssize_t len;

		if (e[i]->d_name[0] != '.') {
			snprintf(path, sizeof(path), "/sys/kernel/slab/%s", e[i]->d_name);
			len = readlink(path, target, sizeof(target) - 1);
			target[len < 0 ? 0 : len] = 0;
			fprintf(f, "%s %s\n", e[i]->d_name, len < 0 ? e[i]->d_name : target);
		}
		free(e[i]);
	}
	if (n >= 0)
		free(e);
}

static int prefix_len(const struct sockaddr *mask)
{
	const unsigned char *b;
	size_t len;
	int bits = 0;

	if (!mask)
		return -1;
	if (mask->sa_family == AF_INET) {
		b = (const unsigned char *)&((const struct sockaddr_in *)mask)->sin_addr;
		len = 4;
	} else {
		b = (const unsigned char *)&((const struct sockaddr_in6 *)mask)->sin6_addr;
		len = 16;
	}
	for (size_t i = 0; i < len; i++)
		bits += __builtin_popcount(b[i]);
	return bits;
}

// The interfaces of the calling process's network namespace (see the
// header), as that namespace answers: if_nameindex, SIOCGIF* ioctls on a
// socket of it, getifaddrs (netlink) and /proc/self/net/dev.
static void sys_ifaces_here(FILE *f)
{
	struct if_nameindex *ifs = if_nameindex();
	struct ifaddrs *addrs = NULL;
	struct stat st;
	char line[512];
	int s = socket(AF_INET, SOCK_DGRAM, 0);
	FILE *dev;

	if (stat("/proc/self/ns/net", &st) == 0)
		fprintf(f, "netns %lu\n", (unsigned long)st.st_ino);
	for (struct if_nameindex *i = ifs; i && i->if_index; i++) {
		struct ifreq r;
		unsigned flags = 0, mtu = 0;
		const unsigned char *mac;

		memset(&r, 0, sizeof(r));
		snprintf(r.ifr_name, sizeof(r.ifr_name), "%s", i->if_name);
		if (ioctl(s, SIOCGIFFLAGS, &r) == 0)
			flags = (unsigned short)r.ifr_flags;
		if (ioctl(s, SIOCGIFMTU, &r) == 0)
			mtu = (unsigned)r.ifr_mtu;
		if (ioctl(s, SIOCGIFHWADDR, &r) < 0)
			memset(&r.ifr_hwaddr, 0, sizeof(r.ifr_hwaddr));
		mac = (const unsigned char *)r.ifr_hwaddr.sa_data;
		fprintf(f, "if %u %s 0x%x %u %02x:%02x:%02x:%02x:%02x:%02x\n", i->if_index, i->if_name, flags, mtu,
			mac[0], mac[1], mac[2], mac[3], mac[4], mac[5]);
	}
	if (getifaddrs(&addrs) == 0)
		for (struct ifaddrs *a = addrs; a; a = a->ifa_next) {
			char buf[INET6_ADDRSTRLEN];
			const void *at;

			if (!a->ifa_addr || (a->ifa_addr->sa_family != AF_INET && a->ifa_addr->sa_family != AF_INET6))
				continue;
			at = a->ifa_addr->sa_family == AF_INET
				     ? (const void *)&((struct sockaddr_in *)a->ifa_addr)->sin_addr
				     : (const void *)&((struct sockaddr_in6 *)a->ifa_addr)->sin6_addr;
			if (inet_ntop(a->ifa_addr->sa_family, at, buf, sizeof(buf)))
				fprintf(f, "addr %s %s/%d\n", a->ifa_name, buf, prefix_len(a->ifa_netmask));
		}
	if (addrs)
		freeifaddrs(addrs);
	// "  NAME: RX_BYTES RX_PACKETS errs drop fifo frame compressed
	// multicast TX_BYTES TX_PACKETS ..." (net/core/net-procfs.c)
	if ((dev = fopen("/proc/self/net/dev", "r"))) {
		while (fgets(line, sizeof(line), dev)) {
			char name[64];
			unsigned long long v[10];

			if (sscanf(line, " %63[^:]: %llu %llu %llu %llu %llu %llu %llu %llu %llu %llu", name, &v[0],
				   &v[1], &v[2], &v[3], &v[4], &v[5], &v[6], &v[7], &v[8], &v[9]) == 11)
				fprintf(f, "stats %s %llu %llu %llu %llu\n", name, v[0], v[1], v[8], v[9]);
		}
		fclose(dev);
	}
	if (ifs)
		if_freenameindex(ifs);
	if (s >= 0)
		close(s);
}

// The same for the network namespace of pid (0: this process's), in a
// child that enters it.
static void sys_ifaces(FILE *f, int pid)
{
	char path[64];
	pid_t child;
	int fd;

	fflush(f);
	if (!pid) {
		sys_ifaces_here(f);
		return;
	}
	child = fork();
	if (child == 0) {
		snprintf(path, sizeof(path), "/proc/%d/ns/net", pid);
		fd = open(path, O_RDONLY);
		if (fd < 0 || setns(fd, CLONE_NEWNET) < 0) {
			fprintf(f, "error %s: %s\n", path, strerror(errno));
			_exit(1);
		}
		sys_ifaces_here(f);
		fflush(f);
		_exit(0);
	}
	if (child > 0)
		waitpid(child, NULL, 0);
}

int kp_sys(const char *dir, const char *tag, int npids, char **pids)
{
	static const char *const net[] = {"tcp", "tcp6", "udp", "udp6", "raw", "raw6", "unix", "netlink"};
	char from[64], to[4096];
	FILE *f;

	for (size_t i = 0; i < sizeof(net) / sizeof(net[0]); i++) {
		snprintf(from, sizeof(from), "/proc/net/%s", net[i]);
		snprintf(to, sizeof(to), "%s/sys.%s.net-%s", dir, tag, net[i]);
		copy_file(from, to);
	}
	if ((f = out_file(dir, tag, "sockfds"))) {
		sys_sockfds(f);
		fclose(f);
	}
	if ((f = out_file(dir, tag, "slablinks"))) {
		sys_slablinks(f);
		fclose(f);
	}
	if ((f = out_file(dir, tag, "ifaces"))) {
		sys_ifaces(f, 0);
		for (int i = 0; i < npids; i++)
			sys_ifaces(f, atoi(pids[i]));
		fclose(f);
	}
	// Real addresses where tests/vm/init set kernel.kptr_restrict=1.
	snprintf(to, sizeof(to), "%s/sys.%s.vmallocinfo", dir, tag);
	copy_file("/proc/vmallocinfo", to);
	snprintf(to, sizeof(to), "%s/sys.%s.interrupts", dir, tag);
	copy_file("/proc/interrupts", to);
	snprintf(to, sizeof(to), "%s/sys.%s.slabinfo", dir, tag);
	copy_file("/proc/slabinfo", to);
	snprintf(to, sizeof(to), "%s/sys.%s.meminfo", dir, tag);
	copy_file("/proc/meminfo", to);
	return 0;
}

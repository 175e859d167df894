// SPDX-License-Identifier: MIT
// Guest workload of the QEMU suite for one process in depth (issue 27),
// built statically by tests/vm/mkinitrd like kp_threads:
//
//   kp_proc start OUT     starts every role below, each exec'd with argv and
//                         environment chosen here, and writes "ROLE PID"
//                         lines to OUT once all of them are set up (a role
//                         that failed: "ROLE error WHY"). The roles then
//                         sleep in pause() for ever, so that what /proc shows
//                         of them holds still while the suite takes its
//                         truth, runs kpeek and dumps the guest.
//   kp_proc truth DIR TAG PID...
//                         the guest's own view of each PID, copied from
//                         /proc (nothing here uses kpeek): DIR/proc.TAG.PID.
//                         {cmdline,environ,stat,status,maps,mountinfo,cgroup,
//                         sched,stack}
//                         byte for byte, .ns ("NAME TARGET" of each
//                         /proc/PID/ns link), .fds (per fd "== FD TARGET",
//                         "stat-ino: N" and "stat-mode: 0MODE" of the file,
//                         then /proc/PID/fdinfo/FD), .envpages (frames of the
//                         environment, /proc/kpageflags), and DIR/proc.TAG.
//                         cmdlines: "PID COMM CMDLINE" of every process, hex.
//   kp_proc sys DIR TAG [NSPID...]
//                         the guest's own view of the system (issue 28):
//                         DIR/sys.TAG.{meminfo,slabinfo,interrupts,vmallocinfo}
//                         and sys.TAG.net-NAME (/proc/net/NAME: tcp, tcp6, udp,
//                         udp6, raw, raw6, unix, netlink) byte for byte,
//                         sys.TAG.slablinks ("NAME TARGET" of /sys/kernel/
//                         slab: which caches are merged), sys.TAG.sockfds
//                         ("PID INODE" of every socket in
//                         every process's fd table) and sys.TAG.ifaces: the
//                         network interfaces of this process's namespace and
//                         of each NSPID's, as the namespace itself answers
//                         (ioctl, getifaddrs, /proc/self/net/dev): "netns
//                         INODE", then per interface "if INDEX NAME FLAGS
//                         MTU MAC", "stats NAME RX_BYTES RX_PACKETS TX_BYTES
//                         TX_PACKETS" and "addr NAME ADDRESS/PREFIX" lines.
//                         The counters and the meminfo, slabinfo and
//                         interrupts copies come last, as close as can be
//                         to what comes after the reading (a dump).
//
// The roles (comm in brackets):
//   args    [kp_args]    arguments with blanks, an empty one, a tab, a
//                        newline, quotes and UTF-8; 100 variables and one
//                        value longer than a 4 KiB page in its environment
//   title   [kp_title]   rewrote its argument area like setproctitle(3),
//                        past its end into the environment: /proc/PID/cmdline
//                        is the new title (fs/proc/base.c get_mm_proctitle())
//   retitle [kp_retitle] rewrote its arguments in place, padded with NULs
//   files   [kp_files]   a regular file at a known offset, one deleted while
//                        open (and mapped), /dev/null, a directory, an O_PATH
//                        fd, a pipe, a listening unix socket, a socket pair,
//                        a listening TCP socket, an epoll, an eventfd, a
//                        memfd (mapped), fd 100; shared and private file
//                        mappings and a PROT_NONE one
//   cred    [kp_cred]    uids 1001/1002/1003, gids 2001/2002/2003,
//                        supplementary groups, umask 027, signals pending
//                        (shared and private), blocked, ignored and caught
//   caps    [kp_caps]    root with reduced capability sets, two dropped from
//                        the bounding set, two ambient, no_new_privs and two
//                        seccomp filters
//   ns      [kp_ns]      new mount, UTS, net, IPC, PID, cgroup (and time)
//                        namespaces, in cgroup /kp.ns; its own tmpfs at
//                        "/tmp/kp ns" (nosuid,nodev,noexec,sync,dirsync,
//                        lazytime, shared) and a read-only bind of it
//                        (/tmp/kp_ro), /tmp a slave of the initial one
//   nschild [kp_nschild] kp_ns's child: PID 1 of the new PID namespace
//   cgroup  [kp_cgroup]  in cgroup v2 group /kp.slice/kp-proc.scope
//   userns  [kp_userns]  in a user namespace of its own
//   net     [kp_net]     sockets of every kind kpeek sockets lists (issue 28):
//                        TCP listening on 10.77.0.1:7100 (the dummy interface
//                        kp0 tests/vm/init sets up) and on [::]:7101, an
//                        established TCP pair over 127.0.0.1:7102, UDP bound
//                        to 10.77.0.1:7103, a UDP socket connected to it
//                        from 127.0.0.1, UDP bound to [fd77::1]:7104, raw
//                        ICMP and ICMPv6 sockets, a unix datagram socket
//                        bound to a path, a listening unix stream socket on
//                        an abstract name; its child [kp_netchild] holds the
//                        UDP socket of 7103 too (a socket of two processes)
//   blocked [kp_blocked] in D state for ever, on a vfork child (kp_blocked.c)
// start mounts cgroup2 on /sys/fs/cgroup and makes /tmp a shared mount first.
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

// ---------------------------------------------------------------- roles

void ready(const char *fmt, ...)
{
	char buf[256];
	va_list ap;
	int n;

	va_start(ap, fmt);
	n = vsnprintf(buf, sizeof(buf), fmt, ap);
	va_end(ap);
	if (n > 0 && write(READY_FD, buf, (size_t)n) != n)
		_exit(1);
	close(READY_FD);
}

void fail(const char *role, const char *what)
{
	ready("%s error %s: %s\n", role, what, strerror(errno));
	_exit(1);
}

void sleep_forever(void)
{
	for (;;)
		pause();
}

// The argument area: [argv[0], end of the last argument's NUL) (mm->arg_start
// and arg_end); the environment follows it (env_start == arg_end).
static char *args_end(int argc, char **argv)
{
	return argv[argc - 1] + strlen(argv[argc - 1]) + 1;
}

static char *env_end(void)
{
	char **e = environ;

	while (e[1])
		e++;
	return e[0] + strlen(e[0]) + 1;
}

static void role_title(int argc, char **argv)
{
	static const char title[] = "kp_title: rewritten by setproctitle, longer than the "
				    "original arguments and running into the environment";
	char *start = argv[0], *end = args_end(argc, argv);

	prctl(PR_SET_NAME, "kp_title", 0, 0, 0);
	// The byte at arg_end - 1 is no longer a NUL: the kernel's sign of a
	// setproctitle() that overflowed into the environment.
	if (start + sizeof(title) <= end || start + sizeof(title) > env_end()) {
		errno = EINVAL;
		fail("title", "argument and environment areas");
	}
	memcpy(start, title, sizeof(title));
	ready("title %d\n", getpid());
	sleep_forever();
}

static void role_retitle(int argc, char **argv)
{
	static const char title[] = "kp_retitle: worker process";
	char *start = argv[0], *end = args_end(argc, argv);

	prctl(PR_SET_NAME, "kp_retitle", 0, 0, 0);
	if (start + sizeof(title) >= end) {
		errno = EINVAL;
		fail("retitle", "argument area");
	}
	memset(start, 0, (size_t)(end - start));
	memcpy(start, title, sizeof(title) - 1);
	ready("retitle %d\n", getpid());
	sleep_forever();
}

// fd_at(FD, NEWFD): FD moved to NEWFD (known numbers for the truth's reader).
static int fd_at(int fd, int want, const char *what)
{
	if (fd < 0)
		fail("files", what);
	if (fd == want)
		return fd;
	if (dup3(fd, want, 0) < 0)
		fail("files", what);
	close(fd);
	return want;
}

static int fd_at_cloexec(int fd, int want, const char *what)
{
	if (fd < 0)
		fail("files", what);
	if (fd == want)
		return fcntl(fd, F_SETFD, FD_CLOEXEC) < 0 ? (fail("files", what), -1) : fd;
	if (dup3(fd, want, O_CLOEXEC) < 0)
		fail("files", what);
	close(fd);
	return want;
}

static void fill(int fd, size_t n, const char *what)
{
	char buf[512];

	for (size_t i = 0; i < sizeof(buf); i++)
		buf[i] = (char)('a' + i % 26);
	while (n) {
		size_t k = n < sizeof(buf) ? n : sizeof(buf);

		if (write(fd, buf, k) != (ssize_t)k)
			fail("files", what);
		n -= k;
	}
}

static void role_files(void)
{
	struct sockaddr_un sun = {.sun_family = AF_UNIX};
	struct sockaddr_in sin = {.sin_family = AF_INET, .sin_port = htons(7777)};
	struct epoll_event ev = {.events = EPOLLIN};
	int fd, p[2], sp[2], one = 1;

	prctl(PR_SET_NAME, "kp_files", 0, 0, 0);
	mkdir(WORK, 0755);
	fd = fd_at(open("/dev/null", O_RDONLY), 0, "/dev/null");
	// 3: a regular file read-write, 4321 bytes in; mapped shared at 4 KiB
	fd = fd_at(open(WORK "/data", O_RDWR | O_CREAT | O_TRUNC, 0644), 3, WORK "/data");
	fill(fd, 20000, "write data");
	if (lseek(fd, 4321, SEEK_SET) != 4321)
		fail("files", "lseek");
	if (mmap(NULL, 8192, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 4096) == MAP_FAILED)
		fail("files", "mmap data");
	// 4: appended to, mapped privately, then deleted
	fd = fd_at(open(WORK "/gone", O_WRONLY | O_CREAT | O_APPEND | O_TRUNC, 0600), 4, WORK "/gone");
	fill(fd, 100, "write gone");
	{
		int r = open(WORK "/gone", O_RDONLY);

		if (r < 0 || mmap(NULL, 100, PROT_READ, MAP_PRIVATE, r, 0) == MAP_FAILED)
			fail("files", "mmap gone");
		close(r);
	}
	if (unlink(WORK "/gone") < 0)
		fail("files", "unlink gone");
	fd_at(open("/dev/null", O_WRONLY | O_NONBLOCK), 5, "/dev/null");
	fd_at_cloexec(open(WORK, O_RDONLY | O_DIRECTORY), 6, WORK);
	fd_at(open(WORK "/data", O_PATH), 7, "O_PATH");
	if (pipe2(p, O_NONBLOCK) < 0)
		fail("files", "pipe");
	fd_at(p[0], 8, "pipe");
	fd_at(p[1], 9, "pipe");
	if (write(9, "kp", 2) != 2)
		fail("files", "write pipe");
	// 10: a listening unix socket
	strcpy(sun.sun_path, WORK "/sock");
	unlink(sun.sun_path);
	fd = fd_at(socket(AF_UNIX, SOCK_STREAM, 0), 10, "unix socket");
	if (bind(fd, (struct sockaddr *)&sun, sizeof(sun)) < 0 || listen(fd, 4) < 0)
		fail("files", "bind unix");
	if (socketpair(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC, 0, sp) < 0)
		fail("files", "socketpair");
	fd_at_cloexec(sp[0], 11, "socketpair");
	fd_at_cloexec(sp[1], 12, "socketpair");
	// 13: TCP listening on 0.0.0.0:7777 (no interface needs to be up)
	fd = fd_at(socket(AF_INET, SOCK_STREAM, 0), 13, "tcp socket");
	setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
	if (bind(fd, (struct sockaddr *)&sin, sizeof(sin)) < 0 || listen(fd, 4) < 0)
		fail("files", "bind tcp");
	fd = fd_at_cloexec(epoll_create1(0), 14, "epoll");
	ev.data.fd = 13;
	if (epoll_ctl(fd, EPOLL_CTL_ADD, 13, &ev) < 0)
		fail("files", "epoll_ctl");
	fd_at(eventfd(3, EFD_NONBLOCK), 15, "eventfd");
	fd = fd_at(memfd_create("kp_memfd", 0), 16, "memfd");
	fill(fd, 5000, "write memfd");
	if (mmap(NULL, 4096, PROT_READ, MAP_SHARED, fd, 0) == MAP_FAILED)
		fail("files", "mmap memfd");
	if (dup2(3, 100) < 0) // FDSize 128
		fail("files", "dup2 100");
	if (mmap(NULL, 3 * 4096, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0) == MAP_FAILED)
		fail("files", "mmap none");
	ready("files %d\n", getpid());
	sleep_forever();
}

static void on_hup(int sig)
{
	(void)sig;
}

static void role_cred(void)
{
	static const gid_t groups[] = {4242, 4343, 10};
	sigset_t set;

	prctl(PR_SET_NAME, "kp_cred", 0, 0, 0);
	umask(027);
	signal(SIGHUP, on_hup);
	signal(SIGUSR2, SIG_IGN);
	sigemptyset(&set);
	sigaddset(&set, SIGUSR1);
	sigaddset(&set, SIGTERM);
	sigaddset(&set, SIGWINCH);
	sigprocmask(SIG_BLOCK, &set, NULL);
	kill(getpid(), SIGUSR1);                                // shared pending (ShdPnd)
	syscall(SYS_tgkill, getpid(), (pid_t)syscall(SYS_gettid), SIGTERM); // thread's own (SigPnd)
	if (setgroups(3, groups) < 0)
		fail("cred", "setgroups");
	if (setresgid(2001, 2002, 2003) < 0)
		fail("cred", "setresgid");
	if (setresuid(1001, 1002, 1003) < 0)
		fail("cred", "setresuid");
	ready("cred %d\n", getpid());
	sleep_forever();
}

#define CAPBIT(c) (1u << ((c) & 31))

static void role_caps(void)
{
	struct __user_cap_header_struct hdr = {.version = _LINUX_CAPABILITY_VERSION_3};
	struct __user_cap_data_struct data[2];
	struct sock_filter allow[] = {BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW)};
	struct sock_fprog prog = {.len = 1, .filter = allow};

	prctl(PR_SET_NAME, "kp_caps", 0, 0, 0);
	if (prctl(PR_CAPBSET_DROP, CAP_SYS_MODULE, 0, 0, 0) < 0 ||
	    prctl(PR_CAPBSET_DROP, CAP_SYS_BOOT, 0, 0, 0) < 0)
		fail("caps", "PR_CAPBSET_DROP");
	memset(data, 0, sizeof(data));
	data[0].effective = CAPBIT(CAP_KILL) | CAPBIT(CAP_NET_BIND_SERVICE) | CAPBIT(CAP_NET_RAW);
	data[0].permitted = data[0].effective | CAPBIT(CAP_SYS_PTRACE);
	data[0].inheritable = CAPBIT(CAP_NET_BIND_SERVICE) | CAPBIT(CAP_NET_RAW);
	data[1].effective = CAPBIT(CAP_WAKE_ALARM);
	data[1].permitted = CAPBIT(CAP_WAKE_ALARM) | CAPBIT(CAP_BLOCK_SUSPEND);
	data[1].inheritable = CAPBIT(CAP_SYSLOG);
	if (syscall(SYS_capset, &hdr, data) < 0)
		fail("caps", "capset");
	if (prctl(PR_CAP_AMBIENT, PR_CAP_AMBIENT_RAISE, CAP_NET_BIND_SERVICE, 0, 0) < 0 ||
	    prctl(PR_CAP_AMBIENT, PR_CAP_AMBIENT_RAISE, CAP_NET_RAW, 0, 0) < 0)
		fail("caps", "PR_CAP_AMBIENT_RAISE");
	if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) < 0)
		fail("caps", "PR_SET_NO_NEW_PRIVS");
	if (prctl(PR_SET_SECCOMP, SECCOMP_MODE_FILTER, &prog, 0, 0) < 0 ||
	    prctl(PR_SET_SECCOMP, SECCOMP_MODE_FILTER, &prog, 0, 0) < 0)
		fail("caps", "PR_SET_SECCOMP");
	ready("caps %d\n", getpid());
	sleep_forever();
}

static void write_file(const char *path, const char *text, const char *role)
{
	int fd = open(path, O_WRONLY);

	if (fd < 0 || write(fd, text, strlen(text)) != (ssize_t)strlen(text))
		fail(role, path);
	close(fd);
}

static void join_cgroup(const char *dir, const char *role)
{
	char path[256], pid[32];

	if (mkdir(dir, 0755) < 0 && errno != EEXIST)
		fail(role, dir);
	snprintf(path, sizeof(path), "%s/cgroup.procs", dir);
	snprintf(pid, sizeof(pid), "%d\n", getpid());
	write_file(path, pid, role);
}

static void role_ns(void)
{
	int flags = CLONE_NEWNS | CLONE_NEWUTS | CLONE_NEWNET | CLONE_NEWIPC | CLONE_NEWPID | CLONE_NEWCGROUP;
	int p[2];
	char c;
	pid_t child;

	prctl(PR_SET_NAME, "kp_ns", 0, 0, 0);
	join_cgroup("/sys/fs/cgroup/kp.ns", "ns");
	// A time namespace where the kernel has them (5.6+, CONFIG_TIME_NS).
	if (unshare(flags | CLONE_NEWTIME) < 0 && unshare(flags) < 0)
		fail("ns", "unshare");
	if (sethostname("kp-ns", 5) < 0)
		fail("ns", "sethostname");
	if (mount(NULL, "/tmp", NULL, MS_SLAVE, NULL) < 0)
		fail("ns", "make /tmp a slave");
	mkdir(NS_MNT, 0755);
	mkdir(NS_RO, 0755);
	if (mount("kp_ns_tmpfs", NS_MNT, "tmpfs",
		  MS_NOSUID | MS_NODEV | MS_NOEXEC | MS_SYNCHRONOUS | MS_DIRSYNC | MS_LAZYTIME | MS_NOATIME,
		  "size=1m,mode=750") < 0)
		fail("ns", "mount tmpfs");
	if (mount(NULL, NS_MNT, NULL, MS_SHARED, NULL) < 0)
		fail("ns", "make the tmpfs shared");
	if (mount(NS_MNT, NS_RO, NULL, MS_BIND, NULL) < 0 ||
	    mount(NULL, NS_RO, NULL, MS_REMOUNT | MS_BIND | MS_RDONLY, NULL) < 0)
		fail("ns", "read-only bind");
	if (pipe(p) < 0)
		fail("ns", "pipe");
	child = fork();
	if (child < 0)
		fail("ns", "fork");
	if (child == 0) {
		close(READY_FD);
		close(p[0]);
		prctl(PR_SET_NAME, "kp_nschild", 0, 0, 0);
		if (write(p[1], "r", 1) != 1)
			_exit(1);
		close(p[1]);
		sleep_forever();
	}
	close(p[1]);
	if (read(p[0], &c, 1) != 1)
		fail("ns", "child not ready");
	close(p[0]);
	ready("ns %d\nnschild %d\n", getpid(), child);
	sleep_forever();
}

static void role_cgroup(void)
{
	prctl(PR_SET_NAME, "kp_cgroup", 0, 0, 0);
	if (mkdir("/sys/fs/cgroup/kp.slice", 0755) < 0 && errno != EEXIST)
		fail("cgroup", "mkdir kp.slice");
	join_cgroup("/sys/fs/cgroup/kp.slice/kp-proc.scope", "cgroup");
	ready("cgroup %d\n", getpid());
	sleep_forever();
}

static void role_userns(void)
{
	prctl(PR_SET_NAME, "kp_userns", 0, 0, 0);
	if (unshare(CLONE_NEWUSER) < 0)
		fail("userns", "unshare");
	ready("userns %d\n", getpid());
	sleep_forever();
}

static void role_args(void)
{
	prctl(PR_SET_NAME, "kp_args", 0, 0, 0);
	ready("args %d\n", getpid());
	sleep_forever();
}

// ---------------------------------------------------------------- start

static char **env_of(const char *role)
{
	static char *small[] = {"PATH=/bin:/usr/bin", "KP_ROLE=other", NULL};
	static char *title[] = {"KP_TITLE_PAD=title padding: ........................................"
				"..............................................................",
				"KP_AFTER=after the title", NULL};
	static char *args[106];
	static char longv[6100];
	int n = 0;

	if (!strcmp(role, "title"))
		return title;
	if (strcmp(role, "args"))
		return small;
	args[n++] = "PATH=/bin:/usr/bin";
	args[n++] = "KP_SPACE=a value  with blanks";
	args[n++] = "KP_EMPTY=";
	// One value longer than a page: numbered, so that a page read twice
	// or skipped shows.
	strcpy(longv, "KP_LONG=");
	for (int i = 0; strlen(longv) + 7 < sizeof(longv) - 1; i++)
		sprintf(longv + strlen(longv), "%05d.", i);
	args[n++] = longv;
	for (int i = 0; i < 100; i++) {
		char *v = malloc(32);

		snprintf(v, 32, "KP_V%03d=value %d", i, i * 7);
		args[n++] = v;
	}
	args[n++] = "KP_END=end";
	args[n] = NULL;
	return args;
}

static pid_t launch(char *const argv[], int ready_w)
{
	pid_t pid = fork();

	if (pid == 0) {
		if (dup2(ready_w, READY_FD) < 0)
			_exit(127);
		close(ready_w);
		execve(SELF, argv, env_of(argv[1]));
		_exit(127);
	}
	return pid;
}

static int start(const char *out)
{
	static char *const roles[][12] = {
		{"kp_proc", "args", "hello world", "", "two  blanks", "tab\there", "new\nline",
		 "quote's \"dq\" $HOME \\ `x`", "\xc3\xbcn\xc3\xaf\x63\xc3\xb6\x64\xc3\xa9", "--", "last", NULL},
		{"kp_proc", "title", "original", "arguments", NULL},
		{"kp_proc", "retitle", "padding-that-the-new-title-leaves-as-NULs", NULL},
		{"kp_proc", "files", NULL},
		{"kp_proc", "cred", NULL},
		{"kp_proc", "caps", NULL},
		{"kp_proc", "ns", NULL},
		{"kp_proc", "cgroup", NULL},
		{"kp_proc", "userns", NULL},
		{"kp_proc", "net", NULL},
		{"kp_proc", "blocked", NULL},
	};
	const int nroles = (int)(sizeof(roles) / sizeof(roles[0]));
	int p[2], lines = 0, want = nroles + 2; // ns and net also report their children
	char buf[4096];
	size_t len = 0;
	FILE *f;

	// Before the roles: the ns role's mount namespace copies these.
	if (mount("cgroup2", "/sys/fs/cgroup", "cgroup2", 0, NULL) < 0)
		perror("kp_proc: mount cgroup2");
	if (mount(NULL, "/tmp", NULL, MS_SHARED, NULL) < 0)
		perror("kp_proc: make /tmp shared");
	if (pipe2(p, O_CLOEXEC) < 0) {
		perror("kp_proc: pipe");
		return 1;
	}
	for (int i = 0; i < nroles; i++)
		if (launch(roles[i], p[1]) < 0)
			perror("kp_proc: fork");
	close(p[1]);
	alarm(60);
	while (len < sizeof(buf) - 1) {
		ssize_t n = read(p[0], buf + len, sizeof(buf) - 1 - len);

		if (n <= 0)
			break;
		len += (size_t)n;
	}
	buf[len] = 0;
	for (size_t i = 0; i < len; i++)
		lines += buf[i] == '\n';
	f = fopen(out, "w");
	if (!f || fputs(buf, f) < 0 || fclose(f) < 0) {
		perror(out);
		return 1;
	}
	if (lines != want) {
		fprintf(stderr, "kp_proc: %d of %d roles ready:\n%s", lines, want, buf);
		return 1;
	}
	return strstr(buf, " error ") ? 1 : 0;
}

int main(int argc, char **argv)
{
	const char *role = argc > 1 ? argv[1] : "";

	if (!strcmp(role, "start") && argc == 3)
		return start(argv[2]);
	if (!strcmp(role, "truth") && argc >= 4)
		return kp_truth(argv[2], argv[3], argc - 4, argv + 4);
	if (!strcmp(role, "sys") && argc >= 4)
		return kp_sys(argv[2], argv[3], argc - 4, argv + 4);
	if (fcntl(READY_FD, F_GETFD) < 0) {
		fprintf(stderr, "usage: kp_proc start OUT | kp_proc truth DIR TAG PID... | kp_proc sys DIR TAG [NSPID...]\n");
		return 2;
	}
	if (!strcmp(role, "args"))
		role_args();
	else if (!strcmp(role, "title"))
		role_title(argc, argv);
	else if (!strcmp(role, "retitle"))
		role_retitle(argc, argv);
	else if (!strcmp(role, "files"))
		role_files();
	else if (!strcmp(role, "cred"))
		role_cred();
	else if (!strcmp(role, "caps"))
		role_caps();
	else if (!strcmp(role, "ns"))
		role_ns();
	else if (!strcmp(role, "cgroup"))
		role_cgroup();
	else if (!strcmp(role, "userns"))
		role_userns();
	else if (!strcmp(role, "net"))
		role_net();
	else if (!strcmp(role, "blocked"))
		role_blocked();
	errno = EINVAL;
	fail(role, "unknown role");
	return 1;
}

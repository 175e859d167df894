// SPDX-License-Identifier: MIT
// BPF programs for the rootkit guest of the QEMU suite: loads a socket
// filter "kp_filter" (harmless) and a kprobe program "kp_write_user" that
// calls bpf_probe_write_user, as BPF rootkits (ebpfkit, TripleCross) do to
// change what user space reads; neither is attached. Prints each
// program's id and type as the kernel reports them (BPF_OBJ_GET_INFO_BY_FD)
// as "prog NAME ID TYPE", then keeps them loaded until killed.
#include <linux/bpf.h>
#include <stdio.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

#define INSN(code, dst, src, off, imm) \
	((struct bpf_insn){ (code), (dst), (src), (off), (imm) })

static int bpf(int cmd, union bpf_attr *attr)
{
	return (int)syscall(__NR_bpf, cmd, attr, sizeof(*attr));
}

static int load(enum bpf_prog_type type, const char *name, const struct bpf_insn *insns,
		unsigned n)
{
	static char log[65536];
	union bpf_attr a;
	memset(&a, 0, sizeof(a));
	a.prog_type = type;
	a.insns = (unsigned long)insns;
	a.insn_cnt = n;
	a.license = (unsigned long)"GPL";	// bpf_probe_write_user is GPL-only
	a.log_buf = (unsigned long)log;
	a.log_size = sizeof(log);
	a.log_level = 1;
	strncpy(a.prog_name, name, sizeof(a.prog_name) - 1);
	int fd = bpf(BPF_PROG_LOAD, &a);
	if (fd < 0) {
		printf("load %s failed: %m\n%s\n", name, log);
		return -1;
	}
	struct bpf_prog_info info;
	memset(&info, 0, sizeof(info));
	memset(&a, 0, sizeof(a));
	a.info.bpf_fd = fd;
	a.info.info_len = sizeof(info);
	a.info.info = (unsigned long)&info;
	if (bpf(BPF_OBJ_GET_INFO_BY_FD, &a) == 0)
		printf("prog %s %u %u\n", name, info.id, info.type);
	return fd;
}

int main(void)
{
	const struct bpf_insn filter[] = {
		INSN(BPF_ALU64 | BPF_MOV | BPF_K, BPF_REG_0, 0, 0, 0),	// r0 = 0
		INSN(BPF_JMP | BPF_EXIT, 0, 0, 0, 0),
	};
	const struct bpf_insn write_user[] = {
		INSN(BPF_ST | BPF_MEM | BPF_DW, BPF_REG_10, 0, -8, 0),	// *(u64 *)(r10 - 8) = 0
		INSN(BPF_ALU64 | BPF_MOV | BPF_K, BPF_REG_1, 0, 0, 0),	// r1 = 0 (user address)
		INSN(BPF_ALU64 | BPF_MOV | BPF_X, BPF_REG_2, BPF_REG_10, 0, 0),
		INSN(BPF_ALU64 | BPF_ADD | BPF_K, BPF_REG_2, 0, 0, -8),	// r2 = r10 - 8
		INSN(BPF_ALU64 | BPF_MOV | BPF_K, BPF_REG_3, 0, 0, 8),	// r3 = 8
		INSN(BPF_JMP | BPF_CALL, 0, 0, 0, BPF_FUNC_probe_write_user),
		INSN(BPF_ALU64 | BPF_MOV | BPF_K, BPF_REG_0, 0, 0, 0),
		INSN(BPF_JMP | BPF_EXIT, 0, 0, 0, 0),
	};
	int a = load(BPF_PROG_TYPE_SOCKET_FILTER, "kp_filter", filter, 2);
	int b = load(BPF_PROG_TYPE_KPROBE, "kp_write_user", write_user, 8);
	fflush(stdout);
	if (a < 0 || b < 0)
		return 1;
	for (;;)
		pause();
}

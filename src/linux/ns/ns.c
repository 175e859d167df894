// SPDX-License-Identifier: MIT
// The namespaces of a task (fs/proc/namespaces.c ns_entries[]): each is a
// struct with a struct ns_common 'ns' inside, whose inum /proc/PID/ns/NAME
// shows ("net:[4026531840]"). The task's nsproxy holds most of them; the
// user namespace is its credentials', the PID namespace the one its
// struct pid belongs to.
#include <inttypes.h>
#include <string.h>

#include "core/layout.h"
#include "linux/ns/ns.h"
#include "util/error.h"

enum { X_NET, X_UTS, X_IPC, X_PID_CHILDREN, X_MNT, X_CGROUP, X_TIME, X_TIME_CHILDREN, X_N };
static const struct kp_member_spec nsproxy_members[X_N] = {
	[X_NET] = { .name = "net_ns" },
	[X_UTS] = { .name = "uts_ns" },
	[X_IPC] = { .name = "ipc_ns" },
	[X_PID_CHILDREN] = { .name = "pid_ns_for_children" },
	[X_MNT] = { .name = "mnt_ns" },
	[X_CGROUP] = { .name = "cgroup_ns", .flags = KP_MEMBER_OPTIONAL },	// CONFIG_CGROUPS
	// 5.6 (769071ac9f20): time namespaces.
	[X_TIME] = { .name = "time_ns", .flags = KP_MEMBER_OPTIONAL },
	[X_TIME_CHILDREN] = { .name = "time_ns_for_children", .flags = KP_MEMBER_OPTIONAL },
};
static const struct kp_struct_spec nsproxy_spec = KP_STRUCT_SPEC("struct nsproxy", nsproxy_members);

// Each namespace type's ns_common.inum.
static const struct kp_member_spec inum_members[] = { { .name = "ns.inum" } };
static const struct kp_struct_spec net_spec = KP_STRUCT_SPEC_OPTIONAL("struct net", inum_members);
static const struct kp_struct_spec uts_spec = KP_STRUCT_SPEC("struct uts_namespace", inum_members);
static const struct kp_struct_spec ipc_spec = KP_STRUCT_SPEC_OPTIONAL("struct ipc_namespace", inum_members);
static const struct kp_struct_spec pid_spec = KP_STRUCT_SPEC("struct pid_namespace", inum_members);
static const struct kp_struct_spec user_spec = KP_STRUCT_SPEC("struct user_namespace", inum_members);
static const struct kp_struct_spec mnt_spec = KP_STRUCT_SPEC("struct mnt_namespace", inum_members);
static const struct kp_struct_spec cgroup_spec = KP_STRUCT_SPEC_OPTIONAL("struct cgroup_namespace", inum_members);
static const struct kp_struct_spec time_spec = KP_STRUCT_SPEC_OPTIONAL("struct time_namespace", inum_members);

static const struct kp_struct_spec *const ns_spec[KP_NS_COUNT] = {
	[KP_NS_NET] = &net_spec, [KP_NS_UTS] = &uts_spec, [KP_NS_IPC] = &ipc_spec,
	[KP_NS_PID] = &pid_spec, [KP_NS_PID_FOR_CHILDREN] = &pid_spec,
	[KP_NS_USER] = &user_spec, [KP_NS_MNT] = &mnt_spec, [KP_NS_CGROUP] = &cgroup_spec,
	[KP_NS_TIME] = &time_spec, [KP_NS_TIME_FOR_CHILDREN] = &time_spec,
};
// Where each comes from: an nsproxy member, or -1 (given by the caller).
static const int ns_member[KP_NS_COUNT] = {
	[KP_NS_NET] = X_NET, [KP_NS_UTS] = X_UTS, [KP_NS_IPC] = X_IPC, [KP_NS_PID] = -1,
	[KP_NS_PID_FOR_CHILDREN] = X_PID_CHILDREN, [KP_NS_USER] = -1, [KP_NS_MNT] = X_MNT,
	[KP_NS_CGROUP] = X_CGROUP, [KP_NS_TIME] = X_TIME, [KP_NS_TIME_FOR_CHILDREN] = X_TIME_CHILDREN,
};

static const char *const ns_names[KP_NS_COUNT] = {
	[KP_NS_NET] = "net", [KP_NS_UTS] = "uts", [KP_NS_IPC] = "ipc", [KP_NS_PID] = "pid",
	[KP_NS_PID_FOR_CHILDREN] = "pid_for_children", [KP_NS_USER] = "user", [KP_NS_MNT] = "mnt",
	[KP_NS_CGROUP] = "cgroup", [KP_NS_TIME] = "time", [KP_NS_TIME_FOR_CHILDREN] = "time_for_children",
};

const char *kp_ns_name(enum kp_ns ns)
{
	return (unsigned)ns < KP_NS_COUNT ? ns_names[ns] : NULL;
}

const char *kp_ns_type(enum kp_ns ns)
{
	if (ns == KP_NS_PID_FOR_CHILDREN)
		return "pid";
	if (ns == KP_NS_TIME_FOR_CHILDREN)
		return "time";
	return kp_ns_name(ns);
}

static struct kp_error *inum(struct kp_kernel *k, enum kp_ns ns, uint64_t address, uint64_t *ret)
{
	const struct kp_struct_layout *l;
	uint32_t v;
	struct kp_error *err = kp_kernel_layout(k, ns_spec[ns], &l);
	if (err)
		return err;
	if (!l->present || !address)
		return NULL;
	if ((err = kp_read_u32(k, address + kp_layout_off(l, 0), &v)))
		return kp_error_prefix(err, "the %s namespace at 0x%" PRIx64, ns_names[ns], address);
	*ret = v;
	return NULL;
}

struct kp_error *kp_lx_namespaces(struct kp_kernel *k, uint64_t nsproxy, uint64_t user_ns,
				  uint64_t pid_ns, uint64_t ret[KP_NS_COUNT])
{
	const struct kp_struct_layout *l;
	uint8_t buf[128];
	uint64_t v[KP_NS_COUNT] = { 0 };
	struct kp_error *err = kp_kernel_layout(k, &nsproxy_spec, &l);
	if (err)
		return err;
	if (nsproxy && (err = kp_kernel_read_struct(k, l, nsproxy, buf, sizeof(buf))))
		return err;
	for (int ns = 0; ns < KP_NS_COUNT; ns++) {
		uint64_t address;
		if (ns == KP_NS_USER)
			address = user_ns;
		else if (ns == KP_NS_PID)
			address = pid_ns;
		else
			address = nsproxy ? kp_layout_u64(l, buf, (unsigned)ns_member[ns]) : 0;
		if ((err = inum(k, ns, address, &v[ns])))
			return err;
	}
	memcpy(ret, v, sizeof(v));
	return NULL;
}

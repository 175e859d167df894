// SPDX-License-Identifier: MIT
// check modules: a module that unlinks itself from the modules list
// (Diamorphine, Reptile, KoviD: list_del(&THIS_MODULE->list)) stays in
// mod_tree (the kernel needs it there to run its code: exception tables,
// __module_address()) and, unless it also removes its kobject, in sysfs.
// Every module in one view must be in the others (linux/module_map.c).
#include <stdio.h>
#include <string.h>

#include "checks/check.h"
#include "linux/module/module.h"
#include "util/error.h"

// enum module_state: a module is in every view only once formed (the list
// gets it while unformed, sysfs and mod_tree while coming); unloading, it
// leaves sysfs while going, then the list and mod_tree while unformed.
#define STATE_LIVE 0
static const char *const states[] = { "MODULE_STATE_LIVE", "MODULE_STATE_COMING",
				      "MODULE_STATE_GOING", "MODULE_STATE_UNFORMED" };

struct kp_error *kp_ck_modules(struct kp_ck *c)
{
	const struct kp_lx_module_map *m = c->mods;
	if (!m) {
		kp_ck_cannot(c, "the modules list cannot be read: %s", c->mods_why);
		return NULL;
	}
	size_t listed = 0, tree = 0, sysfs = 0;
	struct kp_error *err = NULL;
	for (size_t i = 0; !err && i < m->n; i++) {
		const struct kp_lx_mod *e = &m->mods[i];
		listed += e->in_list;
		tree += e->in_tree;
		sysfs += e->in_sysfs;
		char why[320] = "";
		if (!e->in_list) {
			snprintf(why, sizeof(why), "not in the modules list, but in %s%s%s",
				 e->in_tree ? "mod_tree" : "",
				 e->in_tree && e->in_sysfs ? " and " : "", e->in_sysfs ? "sysfs" : "");
		} else if (e->state == STATE_LIVE && m->have_tree && !e->in_tree) {
			snprintf(why, sizeof(why), "in the modules list but not in mod_tree");
		} else if (e->state == STATE_LIVE && m->have_sysfs && !e->in_sysfs) {
			snprintf(why, sizeof(why), "in the modules list but not in sysfs (/sys/module)");
		}
		bool moving = e->state > STATE_LIVE && e->state < 4;
		if (why[0] && moving) {
			size_t len = strlen(why);
			snprintf(why + len, sizeof(why) - len, "; it is %s (being %s)", states[e->state],
				 e->state == 1 ? "loaded" : "unloaded or set up");
		}
		if (why[0] && e->nranges) {
			size_t len = strlen(why);
			snprintf(why + len, sizeof(why) - len, "; its core memory at 0x%llx-0x%llx",
				 (unsigned long long)e->ranges[0].start, (unsigned long long)e->ranges[0].end);
		}
		// Live, a module between its lifecycle's steps is a transition;
		// in a dump it is said (a rootkit could set the state itself).
		if (why[0] && moving && c->live)
			err = kp_ck_add_race(c, e->address, why, "module %s", e->name);
		else
			err = kp_ck_add(c, e->address, NULL, why[0] ? why : NULL, "module %s", e->name);
	}
	if (err)
		return err;
	if (!m->have_tree && !m->have_sysfs) {
		kp_ck_cannot(c, "no view to compare the modules list with: mod_tree: %s; sysfs: %s",
			     m->tree_why, m->sysfs_why);
		return NULL;
	}
	if ((err = kp_ck_summary(c, "%zu in the modules list, %zu in mod_tree, %zu in sysfs (%zu modules in all)",
				 listed, tree, sysfs, m->n)))
		return err;
	if (!m->have_tree)
		err = kp_ck_summary(c, "mod_tree not compared: %s", m->tree_why);
	if (!err && !m->have_sysfs)
		err = kp_ck_summary(c, "sysfs not compared: %s", m->sysfs_why);
	return err;
}

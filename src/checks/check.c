// SPDX-License-Identifier: MIT
// The result of one integrity check (public kp_check_* accessors) and
// the helpers every check uses to fill it.
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "arch/arch.h"
#include "checks/check.h"
#include "core/kernel.h"
#include "linux/module/module.h"
#include "util/error.h"
#include "util/vec.h"

struct kp_check {
	const char *name;
	enum kp_check_status status;
	char *reason;
	struct kp_finding *f;
	size_t n, cap, dropped;
	char **summary;
	size_t nsummary, summary_cap;
	// Strings of the findings: object, why, sym.name and module copies.
	char **strs;
	size_t nstrs, strs_cap;
};

static char *keep(struct kp_check *out, const char *s)
{
	if (!s)
		return NULL;
	if (!KP_VEC_RESERVE(out->strs, out->strs_cap, out->nstrs + 1))
		return NULL;
	char *copy = strdup(s);
	if (copy)
		out->strs[out->nstrs++] = copy;
	return copy;
}

bool kp_ck_in_text(const struct kp_ck *c, uint64_t address)
{
	return address >= c->stext && address < c->etext;
}

bool kp_ck_symbol(struct kp_ck *c, uint64_t address, struct kp_symbol *ret)
{
	return kp_lx_module_map_symbol(c->mods, address, ret) ||
	       kp_kernel_symbol_at(c->k, address, ret);
}

void kp_ck_where(struct kp_ck *c, uint64_t address, char *buf, size_t size)
{
	const struct kp_lx_mod *m = kp_lx_module_map_find(c->mods, address);
	if (kp_ck_in_text(c, address))
		snprintf(buf, size, "kernel text");
	else if (m)
		snprintf(buf, size, "module '%s'%s", m->name,
			 m->in_list ? "" : ", which is not in the modules list");
	else
		snprintf(buf, size, "neither kernel text nor a module");
}

bool kp_ck_trusted_code(struct kp_ck *c, uint64_t address)
{
	if (kp_ck_in_text(c, address))
		return true;
	const struct kp_lx_mod *m = kp_lx_module_map_find(c->mods, address);
	return m && m->in_list;
}

static struct kp_error *add(struct kp_ck *c, uint64_t address, const struct kp_symbol *sym,
			    const char *why, enum kp_finding_kind kind, const char *object)
{
	struct kp_check *out = c->out;
	if (!why && !(c->flags & KP_CHECK_ALL))
		return NULL;
	if (why && kind == KP_FINDING_SUSPICIOUS)
		out->status = KP_CHECK_FOUND;
	if (out->n >= KP_CHECK_MAX_FINDINGS) {
		out->dropped++;
		return NULL;
	}
	if (!KP_VEC_RESERVE(out->f, out->cap, out->n + 1))
		return &kp_enomem;
	struct kp_finding f = { .address = address, .kind = kind };
	struct kp_symbol s;
	if (sym && sym->name)
		s = *sym;
	if ((sym && sym->name) || (!sym && address && kp_ck_symbol(c, address, &s))) {
		f.sym = s;
		if (!(f.sym.name = keep(out, s.name)))
			return &kp_enomem;
	}
	const struct kp_lx_mod *m = kp_lx_module_map_find(c->mods, address);
	if (m) {
		f.hidden_module = !m->in_list;
		if (!(f.module = keep(out, m->name)))
			return &kp_enomem;
	} else if (f.sym.name && f.sym.module) {
		if (!(f.module = keep(out, f.sym.module)))
			return &kp_enomem;
	}
	f.sym.module = f.module;
	if (!(f.object = keep(out, object)) || (why && !(f.why = keep(out, why))))
		return &kp_enomem;
	out->f[out->n++] = f;
	return NULL;
}

struct kp_error *kp_ck_add(struct kp_ck *c, uint64_t address, const struct kp_symbol *sym,
			   const char *why, const char *object_fmt, ...)
{
	char object[256];
	va_list ap;
	va_start(ap, object_fmt);
	vsnprintf(object, sizeof(object), object_fmt, ap);
	va_end(ap);
	return add(c, address, sym, why, KP_FINDING_SUSPICIOUS, object);
}

struct kp_error *kp_ck_add_race(struct kp_ck *c, uint64_t address, const char *why,
				const char *object_fmt, ...)
{
	char object[256];
	va_list ap;
	va_start(ap, object_fmt);
	vsnprintf(object, sizeof(object), object_fmt, ap);
	va_end(ap);
	return add(c, address, NULL, why, KP_FINDING_LIVE_RACE, object);
}

static bool same(const struct kp_finding *a, const struct kp_finding *b)
{
	return a->address == b->address && a->why && b->why && !strcmp(a->object, b->object) &&
	       !strcmp(a->why, b->why);
}

void kp_ck_confirm(struct kp_check *first, const struct kp_check *second)
{
	bool found = false;
	for (size_t i = 0; i < first->n; i++) {
		struct kp_finding *f = &first->f[i];
		if (!f->why || f->kind != KP_FINDING_SUSPICIOUS)
			continue;
		bool again = false;
		for (size_t j = 0; j < second->n && !again; j++)
			again = second->f[j].kind == KP_FINDING_SUSPICIOUS && same(f, &second->f[j]);
		if (again)
			found = true;
		else
			f->kind = KP_FINDING_LIVE_RACE;
	}
	if (first->status == KP_CHECK_FOUND && !found)
		first->status = first->reason ? KP_CHECK_CANNOT : KP_CHECK_CLEAN;
}

struct kp_error *kp_ck_summary(struct kp_ck *c, const char *fmt, ...)
{
	struct kp_check *out = c->out;
	char line[512];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(line, sizeof(line), fmt, ap);
	va_end(ap);
	if (!KP_VEC_RESERVE(out->summary, out->summary_cap, out->nsummary + 1))
		return &kp_enomem;
	if (!(out->summary[out->nsummary] = strdup(line)))
		return &kp_enomem;
	out->nsummary++;
	return NULL;
}

void kp_ck_cannot(struct kp_ck *c, const char *fmt, ...)
{
	char why[512];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(why, sizeof(why), fmt, ap);
	va_end(ap);
	free(c->out->reason);
	c->out->reason = strdup(why);
	if (c->out->status != KP_CHECK_FOUND)
		c->out->status = KP_CHECK_CANNOT;
}

void kp_ck_not_applicable(struct kp_ck *c, const char *why)
{
	free(c->out->reason);
	c->out->reason = strdup(why);
	c->out->status = KP_CHECK_NOT_APPLICABLE;
}

struct kp_error *kp_ck_cannot_err(struct kp_ck *c, struct kp_error *err, const char *what)
{
	if (err == &kp_enomem || (err && err->code == KP_ERR_NOMEM))
		return err;
	if (what)
		kp_ck_cannot(c, "%s: %s", what, err ? kp_error_message(err) : "unknown");
	else
		kp_ck_cannot(c, "%s", err ? kp_error_message(err) : "unknown");
	kp_error_destroy(err);
	return NULL;
}

bool kp_ck_addrs_add(struct kp_ck_addrs *s, uint64_t address)
{
	if (!KP_VEC_RESERVE(s->v, s->cap, s->n + 1))
		return false;
	s->v[s->n++] = address;
	return true;
}

static int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
	return x < y ? -1 : x > y;
}

void kp_ck_addrs_sort(struct kp_ck_addrs *s)
{
	if (!s->n)
		return;
	qsort(s->v, s->n, sizeof(*s->v), cmp_u64);
	size_t n = 1;
	for (size_t i = 1; i < s->n; i++)
		if (s->v[i] != s->v[n - 1])
			s->v[n++] = s->v[i];
	s->n = n;
}

bool kp_ck_addrs_has(const struct kp_ck_addrs *s, uint64_t address)
{
	return s->n && bsearch(&address, s->v, s->n, sizeof(*s->v), cmp_u64);
}

void kp_ck_addrs_free(struct kp_ck_addrs *s)
{
	free(s->v);
	memset(s, 0, sizeof(*s));
}

struct kp_check *kp_ck_result_create(const char *name)
{
	struct kp_check *c = calloc(1, sizeof(*c));
	if (c)
		c->name = name;
	return c;
}

const char *kp_check_name(const struct kp_check *c) { return c->name; }
enum kp_check_status kp_check_status(const struct kp_check *c) { return c->status; }
const char *kp_check_reason(const struct kp_check *c) { return c->reason; }
size_t kp_check_count(const struct kp_check *c) { return c->n; }
size_t kp_check_dropped(const struct kp_check *c) { return c->dropped; }
size_t kp_check_summary_count(const struct kp_check *c) { return c->nsummary; }

const struct kp_finding *kp_check_finding(const struct kp_check *c, size_t i)
{
	return i < c->n ? &c->f[i] : NULL;
}

const char *kp_check_summary(const struct kp_check *c, size_t i)
{
	return i < c->nsummary ? c->summary[i] : NULL;
}

void kp_check_destroy(struct kp_check *c)
{
	if (!c)
		return;
	for (size_t i = 0; i < c->nstrs; i++)
		free(c->strs[i]);
	for (size_t i = 0; i < c->nsummary; i++)
		free(c->summary[i]);
	free(c->strs);
	free(c->summary);
	free(c->f);
	free(c->reason);
	free(c);
}

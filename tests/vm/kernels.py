#!/usr/bin/python3
# SPDX-License-Identifier: MIT
# The suite's kernels (tests/vm/kernels.conf): fetched from the Debian
# mirror the system's apt sources name, unpacked and cached outside the
# checkout, reused across runs.
#
#   tests/vm/kernels.py [ID...]            fetch (or find cached) kernels
#   tests/vm/kernels.py --userland ARCH    the libraries and busybox of
#                                          another architecture's guests
#
# Cache: $KPEEK_KERNEL_CACHE, else $XDG_CACHE_HOME/kpeek-kernels, else
# ~/.cache/kpeek-kernels:
#   apt/SUITE/      a private apt configuration and state per suite (used
#                   through APT_CONFIG; the system's apt configuration, its
#                   sources and its hooks are never read or changed)
#   debs/           downloaded packages
#   kernels/ID/     root/ (dpkg-deb -x of every package, depmod -b run) and
#                   kernel.json (release, vmlinuz, packages)
# A kernel already in the cache needs no network. A kernel that cannot be
# fetched is an error (the suite fails), never a skip.
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
CONF = os.path.join(HERE, "kernels.conf")
SYSTEM_SOURCES = "/etc/apt/sources.list.d/debian.sources"
KEYRING = "/usr/share/keyrings/debian-archive-keyring.gpg"
VERSIONED = re.compile(r"^linux-(image|binary|modules|base)-\d")


class KernelError(Exception):
    pass


class Kernel:
    def __init__(self, kid, arch, suite, meta, paging):
        self.id, self.arch, self.suite, self.meta = kid, arch, suite, meta
        self.paging = paging
        self.root = None       # the unpacked tree ("/" for the installed kernel)
        self.release = None
        self.vmlinuz = None
        self.packages = []     # "name=version"

    def moddir(self):
        for d in ("lib/modules", "usr/lib/modules"):
            p = os.path.join(self.root, d, self.release)
            if os.path.isdir(p):
                return p
        raise KernelError("kernel %s: no modules directory for %s under %s" % (
            self.id, self.release, self.root))

    def __repr__(self):
        return "%s (%s %s, %s)" % (self.id, self.release, self.arch, self.vmlinuz)


def read_conf(path=CONF):
    kernels = []
    with open(path) as f:
        for line in f:
            line = line.split("#", 1)[0].split()
            if not line:
                continue
            if len(line) < 5:
                raise KernelError("%s: want ID ARCH SUITE METAPACKAGE PAGING...: %s" % (path, line))
            kernels.append(Kernel(line[0], line[1], line[2], line[3], line[4:]))
    return kernels


def cache_dir():
    d = os.environ.get("KPEEK_KERNEL_CACHE")
    if not d:
        base = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
        d = os.path.join(base, "kpeek-kernels")
    return d


def version_key(s):
    return [int(x) if x.isdigit() else x for x in re.split(r"(\d+)", s)]


# ---------------------------------------------------------------- the installed kernel

def installed(k):
    """The host's newest /boot/vmlinuz-*-ARCH (linux-image-amd64 is a
    metapackage; never assume a version)."""
    flavour = k.meta[len("linux-image-"):]
    cands = []
    for name in os.listdir("/boot"):
        m = re.fullmatch(r"vmlinuz-(.*)", name)
        if m and m.group(1).endswith("-" + flavour) and \
                not m.group(1)[:-len(flavour) - 1].endswith(("-rt", "-cloud")):
            cands.append(m.group(1))
    if not cands:
        raise KernelError("kernel %s: no /boot/vmlinuz-*-%s (run scripts/install-deps check)" % (
            k.id, flavour))
    k.release = sorted(cands, key=version_key)[-1]
    k.root = "/"
    k.vmlinuz = "/boot/vmlinuz-" + k.release
    k.packages = ["linux-image-%s (installed)" % k.release]
    return k


# ---------------------------------------------------------------- the private apt

def mirror():
    """The first URIs: of the system's deb822 sources (the Debian mirror)."""
    try:
        with open(SYSTEM_SOURCES) as f:
            for line in f:
                m = re.match(r"^URIs:\s*(\S+)", line)
                if m:
                    return m.group(1)
    except OSError as e:
        raise KernelError("cannot read the system's apt sources %s: %s" % (SYSTEM_SOURCES, e))
    raise KernelError("%s names no URIs:" % SYSTEM_SOURCES)


def system_stanzas():
    """(uri, [suites]) of every stanza of the system's sources."""
    out = []
    with open(SYSTEM_SOURCES) as f:
        for stanza in f.read().split("\n\n"):
            u = re.search(r"(?m)^URIs:\s*(\S+)", stanza)
            s = re.search(r"(?m)^Suites:\s*(.+)$", stanza)
            if u and s:
                out.append((u.group(1), s.group(1).split()))
    return out


def host_codename():
    try:
        with open("/etc/os-release") as f:
            m = re.search(r"(?m)^VERSION_CODENAME=(\S+)", f.read())
            return m.group(1) if m else None
    except OSError:
        return None


def sources_for(suite):
    """deb lines for SUITE: the system's own stanzas when SUITE is the host's
    release (its -updates and -security too), else SUITE on the mirror."""
    opts = "[arch=amd64,arm64 signed-by=%s]" % KEYRING
    if suite == host_codename():
        lines = ["deb %s %s %s main" % (opts, uri, s) for uri, suites in system_stanzas()
                 for s in suites if s == suite or s.startswith(suite + "-")]
        if lines:
            return lines
    return ["deb %s %s %s main" % (opts, mirror(), suite)]


class Apt:
    def __init__(self, cache, suite):
        self.dir = os.path.join(cache, "apt", suite)
        self.suite = suite
        self.conf = os.path.join(self.dir, "apt.conf")
        self.updated = False

    def setup(self):
        d = self.dir
        for sub in ("parts", "state/lists/partial", "cache/archives/partial", "log"):
            os.makedirs(os.path.join(d, sub), exist_ok=True)
        with open(os.path.join(d, "sources.list"), "w") as f:
            f.write("\n".join(sources_for(self.suite)) + "\n")
        status = os.path.join(d, "state", "status")
        if not os.path.exists(status):
            open(status, "w").close()
        # Read instead of /etc/apt/apt.conf and apt.conf.d (APT_CONFIG is
        # read first; Dir::Etc::main and parts then point away from /etc).
        # The mirror is a frozen snapshot: its Release files are "expired".
        with open(self.conf, "w") as f:
            f.write("""Dir::Etc::main "/dev/null";
Dir::Etc::parts "{d}/parts";
Dir::Etc::preferencesparts "{d}/parts";
Dir::Etc::sourcelist "{d}/sources.list";
Dir::Etc::sourceparts "{d}/parts";
Dir::State "{d}/state";
Dir::State::Lists "{d}/state/lists";
Dir::State::status "{d}/state/status";
Dir::Cache "{d}/cache";
Dir::Log "{d}/log";
APT::Architectures {{ "amd64"; "arm64"; }};
APT::Sandbox::User "{user}";
Acquire::Languages "none";
Acquire::Check-Valid-Until "false";
""".format(d=d, user="_apt" if os.geteuid() == 0 else os.environ.get("USER", "nobody")))

    def run(self, args, cwd=None):
        env = dict(os.environ, APT_CONFIG=self.conf, LC_ALL="C")
        r = subprocess.run(args, env=env, cwd=cwd, capture_output=True, text=True,
                           stdin=subprocess.DEVNULL)
        if r.returncode != 0:
            raise KernelError("%s (APT_CONFIG=%s): exit %d: %s" % (
                " ".join(args), self.conf, r.returncode,
                (r.stderr.strip() or r.stdout.strip()).split("\n")[-1]))
        return r.stdout

    def update(self):
        if not self.updated:
            self.setup()
            self.run(["apt-get", "-q", "update"])
            self.updated = True

    def field(self, pkg, name):
        """A field of the candidate version of pkg."""
        out = self.run(["apt-cache", "show", "--no-all-versions", pkg])
        m = re.search(r"(?m)^%s: (.*)$" % re.escape(name), out)
        return m.group(1) if m else ""

    def closure(self, meta, arch):
        """The versioned kernel packages meta pulls in: (name, version)."""
        seen, todo, out = set(), [meta], []
        while todo:
            pkg = todo.pop(0)
            if pkg in seen:
                continue
            seen.add(pkg)
            ver = self.field("%s:%s" % (pkg, arch), "Version")
            if not ver:
                raise KernelError("suite %s has no package %s:%s" % (self.suite, pkg, arch))
            if VERSIONED.match(pkg):
                out.append((pkg, ver))
            for dep in self.field("%s:%s" % (pkg, arch), "Depends").split(","):
                for alt in dep.split("|"):
                    name = alt.strip().split()[0] if alt.strip() else ""
                    name = name.split(":")[0]
                    if VERSIONED.match(name):
                        todo.append(name)
        if not [p for p, _ in out if re.match(r"^linux-(image|binary)-", p)]:
            raise KernelError("%s in %s pulls in no versioned linux-image/-binary package" % (
                meta, self.suite))
        return out


# ---------------------------------------------------------------- unpacking

def find_release(root):
    rels = []
    for d in ("lib/modules", "usr/lib/modules"):
        p = os.path.join(root, d)
        if os.path.isdir(p) and not os.path.islink(p):
            rels += [x for x in os.listdir(p) if os.path.isdir(os.path.join(p, x, "kernel"))]
    if len(rels) != 1:
        raise KernelError("%s: expected one kernel release under lib/modules, found %s" % (root, rels))
    return rels[0]


def find_vmlinuz(root, release):
    for p in ("boot/vmlinuz-" + release, "usr/lib/modules/%s/vmlinuz" % release,
              "lib/modules/%s/vmlinuz" % release):
        if os.path.isfile(os.path.join(root, p)):
            return os.path.join(root, p)
    raise KernelError("%s: no vmlinuz for %s (boot/, usr/lib/modules/REL/)" % (root, release))


def download(apt, pkgs, arch, cache, log, who):
    """The .deb files of pkgs [(name, version)], from the cache or apt."""
    debs = os.path.join(cache, "debs")
    os.makedirs(debs, exist_ok=True)
    if os.geteuid() == 0:
        shutil.chown(debs, "_apt")  # apt's download sandbox writes as _apt
    files = []
    for name, ver in pkgs:
        v = ver.replace(":", "%3a")
        have = [f for f in os.listdir(debs) if f.startswith("%s_%s_" % (name, v)) and
                f.endswith(("_%s.deb" % arch, "_all.deb"))]
        if not have:
            log("kernels: %s: apt-get download %s:%s=%s" % (who, name, arch, ver))
            apt.run(["apt-get", "-q", "download", "%s:%s=%s" % (name, arch, ver)], cwd=debs)
            have = [f for f in os.listdir(debs) if f.startswith("%s_%s_" % (name, v)) and
                    f.endswith(("_%s.deb" % arch, "_all.deb"))]
        if not have:
            raise KernelError("apt-get download %s=%s left no .deb in %s" % (name, ver, debs))
        files.append(os.path.join(debs, have[0]))
    return files


def unpack(files, parent, prefix):
    """dpkg-deb -x of every file into a new PARENT/PREFIX.XXXX/root."""
    os.makedirs(parent, exist_ok=True)
    tmp = tempfile.mkdtemp(prefix=prefix + ".", dir=parent)
    root = os.path.join(tmp, "root")
    os.makedirs(root)
    for f in files:
        r = subprocess.run(["dpkg-deb", "-x", f, root], capture_output=True, text=True)
        if r.returncode != 0:
            raise KernelError("dpkg-deb -x %s: %s" % (f, r.stderr.strip()))
    return tmp, root


def fetch(k, cache, apts, log):
    kdir = os.path.join(cache, "kernels", k.id)
    info = os.path.join(kdir, "kernel.json")
    if os.path.exists(info):
        with open(info) as f:
            j = json.load(f)
        k.root, k.release, k.vmlinuz, k.packages = j["root"], j["release"], j["vmlinuz"], j["packages"]
        if os.path.isfile(k.vmlinuz):
            return k
    apt = apts.setdefault(k.suite, Apt(cache, k.suite))
    log("kernels: %s: apt-get update of %s" % (k.id, k.suite))
    apt.update()
    pkgs = apt.closure(k.meta, k.arch)
    files = download(apt, pkgs, k.arch, cache, log, k.id)
    tmp, root = unpack(files, os.path.join(cache, "kernels"), k.id)
    release = find_release(root)
    # usr-merged packages (6.12+) put modules under usr/lib; depmod -b
    # looks under lib/modules.
    if not os.path.exists(os.path.join(root, "lib")):
        os.symlink("usr/lib", os.path.join(root, "lib"))
    # modules.dep is made by the package's postinst, not shipped.
    r = subprocess.run(["depmod", "-b", root, release], capture_output=True, text=True)
    if r.returncode != 0:
        raise KernelError("depmod -b %s %s: %s" % (root, release, r.stderr.strip()))
    shutil.rmtree(kdir, ignore_errors=True)
    os.rename(tmp, kdir)
    root = os.path.join(kdir, "root")
    k.root, k.release = root, release
    k.vmlinuz = find_vmlinuz(root, release)
    k.packages = ["%s=%s" % p for p in pkgs]
    with open(info + ".tmp", "w") as f:
        json.dump({"id": k.id, "root": k.root, "release": k.release, "vmlinuz": k.vmlinuz,
                   "packages": k.packages}, f, indent=1)
    os.rename(info + ".tmp", info)
    return k


# What a guest of another architecture needs from the host's own release:
# static busybox for its /init, and the libraries kpeek links with (headers
# and .so for the cross build, the .so files again in the guest).
# The host release's python3 (the suite runs under it): the guests' python3
# and the Python bindings' headers are of that version.
PYTHON = "python%d.%d" % sys.version_info[:2]
USERLAND = ["busybox-static", "libc6", "libgcc-s1", "libstdc++6", "libbpf1", "libbpf-dev",
            "libelf1", "libelf-dev", "zlib1g", "zlib1g-dev", "libzstd1", "libzstd-dev",
            "liblzo2-2", "liblzo2-dev", "libsnappy1v5", "libsnappy-dev", "libdeflate0", "libdeflate-dev",
            # python3 in the arm64 guests, and the headers to cross-build
            # the bindings with (scripts/cross-build)
            "%s-minimal" % PYTHON, "lib%s-minimal" % PYTHON, "lib%s-stdlib" % PYTHON,
            "lib%s-dev" % PYTHON, "libexpat1"]


def userland(arch, log=lambda s: print(s, file=sys.stderr, flush=True)):
    """The root of the unpacked USERLAND packages of arch (from the host's
    release, so that headers match the host's), cached."""
    cache = cache_dir()
    udir = os.path.join(cache, "userland", arch)
    stamp = os.path.join(udir, "packages")
    if os.path.exists(stamp):
        with open(stamp) as f:
            have = [line.split("=")[0] for line in f.read().split("\n") if line]
        if have == USERLAND:  # else unpacked for another list: again
            return os.path.join(udir, "root")
    suite = host_codename()
    if not suite:
        raise KernelError("no VERSION_CODENAME in /etc/os-release: which release's libraries?")
    apt = Apt(cache, suite)
    log("kernels: userland %s: apt-get update of %s" % (arch, suite))
    apt.update()
    pkgs = []
    for name in USERLAND:
        ver = apt.field("%s:%s" % (name, arch), "Version")
        if not ver:
            raise KernelError("%s has no package %s:%s" % (suite, name, arch))
        pkgs.append((name, ver))
    files = download(apt, pkgs, arch, cache, log, "userland " + arch)
    tmp, root = unpack(files, os.path.join(cache, "userland"), arch)
    with open(os.path.join(tmp, "packages"), "w") as f:
        f.write("".join("%s=%s\n" % p for p in pkgs))
    shutil.rmtree(udir, ignore_errors=True)
    os.rename(tmp, udir)
    return os.path.join(udir, "root")


def headers(k, log=lambda s: print(s, file=sys.stderr, flush=True)):
    """The linux-headers tree of a foreign-architecture kernel k, ready to
    cross-build a module with (tests/vm/mkinitrd), and None; or None and
    the reason. The package of k's release, its -common, and the kbuild
    tools (fixdep, modpost) of the host's architecture, from k's suite; only
    where the compiler the kernel was built with (the gcc-N the package
    depends on) is here as a cross compiler (Debian 12's arm64 kernel:
    gcc-12, as the host's)."""
    if k.arch == "amd64":
        return None, "not a foreign architecture"
    cache = cache_dir()
    hdir = os.path.join(cache, "headers", k.id)
    tree = os.path.join(hdir, "root", "usr", "src", "linux-headers-" + k.release)
    # The cross compiler a release's headers asked for, when it was missing:
    # asked of the system again, not of the mirror (an apt-get update of the
    # kernel's suite on every run).
    needs = os.path.join(cache, "headers", "%s.needs-%s" % (k.id, k.release))
    if os.path.exists(needs):
        with open(needs) as f:
            cc = f.read().strip()
        if not shutil.which(cc):
            return None, missing_cc(cc, k)
    if not os.path.exists(os.path.join(hdir, "done-" + k.release)):
        apt = Apt(cache, k.suite)
        apt.update()
        name = "linux-headers-" + k.release
        ver = apt.field("%s:%s" % (name, k.arch), "Version")
        if not ver:
            return None, "%s has no %s:%s" % (k.suite, name, k.arch)
        common = re.sub(r"-[a-z0-9]+$", "-common", name)
        deps = apt.field("%s:%s" % (name, k.arch), "Depends") or ""
        m, gcc = re.search(r"(linux-kbuild-[^\s,(]+)", deps), re.search(r"\b(gcc-\d+)\b", deps)
        if not m or not gcc:
            return None, "%s names no linux-kbuild or gcc in its Depends: %s" % (name, deps)
        cc = cross_cc(k.arch, gcc.group(1))
        if not shutil.which(cc):
            os.makedirs(os.path.dirname(needs), exist_ok=True)
            with open(needs, "w") as f:
                f.write(cc + "\n")
            return None, missing_cc(cc, k)
        host = subprocess.run(["dpkg", "--print-architecture"], capture_output=True, text=True).stdout.strip()
        files = download(apt, [(name, ver)], k.arch, cache, log, k.id + " headers")
        files += download(apt, [(common, ver)], "all", cache, log, k.id + " headers")
        files += download(apt, [(m.group(1), ver)], host, cache, log, k.id + " headers")
        shutil.rmtree(hdir, ignore_errors=True)
        tmp, root = unpack(files, os.path.join(cache, "headers"), k.id)
        # Its Makefile includes the common tree by absolute path.
        mk = os.path.join(root, "usr", "src", name, "Makefile")
        with open(mk) as f:
            text = f.read()
        with open(mk, "w") as f:
            f.write(text.replace("/usr/src/", os.path.join(hdir, "root", "usr", "src") + "/"))
        os.rename(tmp, hdir)
        open(os.path.join(hdir, "done-" + k.release), "w").close()
    return tree, None


def cross_cc(arch, gcc):
    return "%s-linux-gnu-%s" % ({"arm64": "aarch64"}.get(arch, arch), gcc)


def missing_cc(cc, k):
    return "no %s here (the compiler %s was built with)" % (cc, k.release)


def get(ids=None, log=lambda s: print(s, file=sys.stderr, flush=True)):
    """The kernels of kernels.conf (or those named), each ready to boot."""
    ks = read_conf()
    if ids:
        unknown = [i for i in ids if i not in [k.id for k in ks]]
        if unknown:
            raise KernelError("no kernel %s in %s" % (", ".join(unknown), CONF))
        ks = [k for k in ks if k.id in ids]
    cache = cache_dir()
    apts = {}
    for k in ks:
        if k.suite == "installed":
            installed(k)
        else:
            fetch(k, cache, apts, log)
    return ks


def main(argv):
    ids = [a for a in argv if not a.startswith("-")]
    if "--userland" in argv:
        try:
            print(userland(ids[0] if ids else "arm64"))
            return 0
        except (KernelError, OSError) as e:
            print("kernels: %s" % e, file=sys.stderr)
            return 1
    try:
        ks = get(ids)
    except (KernelError, OSError) as e:
        print("kernels: %s" % e, file=sys.stderr)
        return 1
    for k in ks:
        print("%-10s %-5s %-28s %s" % (k.id, k.arch, k.release, k.vmlinuz))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))

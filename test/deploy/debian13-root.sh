#!/bin/sh
# Runs a command in a Debian 13 (trixie) root, with a given Node binary, on this machine's kernel:
# the C library and system libraries of the image's base (Dockerfile) without a container engine.
#
#   test/deploy/debian13-root.sh NODE_BINARY COMMAND [ARG...]
#
# e.g. test/deploy/debian13-root.sh "$(npx -y -p node@24 -- node -p process.execPath)" \
#        node --import tsx --test test/e2e/http-edge-uws.test.ts
#
# The root is made once with debootstrap's first stage (variant minbase, unpacked: libc, libstdc++
# and libgcc, which are all that Node's and uWS's binaries link, plus dpkg and apt) and kept in
# the user's cache, ~/.cache/chorus/debian13/root (or $DEBIAN13_ROOT), so that every checkout on
# the machine uses the one made first, as npm's cache and Maven's repository are shared; delete
# that folder to make it again. NODE_BINARY is copied to /usr/local/bin/node in it. The command
# runs as root in the project folder, mounted at the same path, with /proc and /dev: the network is
# the machine's, so Kafka, PostgreSQL and Redis on 127.0.0.1 answer inside.
# The mounts live in a mount namespace of their own (unshare), so they vanish with the command,
# even when it is killed, and never outlive it in the root.
#
# Needs root, debootstrap (`apt-get install debootstrap`), unshare and chroot (util-linux,
# coreutils) and a Debian mirror: $DEBIAN_MIRROR, else the one apt uses here, else deb.debian.org.
# The first run downloads about 30 MB and takes about a minute; later ones start at once.
set -eu

if [ $# -lt 2 ]; then
  echo "usage: $0 NODE_BINARY COMMAND [ARG...]" >&2
  exit 64
fi
node_binary=$1
shift

# debootstrap, chroot and unshare live in sbin, which a non-login shell's PATH may lack.
PATH=$PATH:/usr/sbin:/sbin
project=$(cd "$(dirname "$0")/../.." && pwd)
root=${DEBIAN13_ROOT:-${XDG_CACHE_HOME:-$HOME/.cache}/chorus/debian13/root}
suite=trixie

[ "$(id -u)" = 0 ] || { echo "$0: needs root (debootstrap, mount, chroot)" >&2; exit 69; }
for tool in debootstrap unshare chroot flock; do
  command -v "$tool" >/dev/null || { echo "$0: $tool is not installed" >&2; exit 69; }
done
[ -x "$node_binary" ] || { echo "$0: $node_binary is not an executable" >&2; exit 66; }

# The Debian mirror apt uses on this machine (deb822 `URIs:` or a one-line `deb` entry).
mirror() {
  if [ -n "${DEBIAN_MIRROR:-}" ]; then echo "$DEBIAN_MIRROR"; return; fi
  found=$(cat /etc/apt/sources.list /etc/apt/sources.list.d/*.list /etc/apt/sources.list.d/*.sources 2>/dev/null |
    sed -n -e 's|^URIs:[[:space:]]*\(\S*/debian\)/*$|\1|p' -e 's|^deb[[:space:]]\+\(\[[^]]*\][[:space:]]\+\)\?\(\S*/debian\)/*[[:space:]].*|\2|p' |
    head -n 1)
  echo "${found:-http://deb.debian.org/debian}"
}

mkdir -p "$(dirname "$root")"
# One builder at a time; the root appears under its name only once complete (a build cut off
# leaves only root.partial, which the next run starts again).
exec 9>"$root.lock"
flock 9
if [ ! -f "$root/etc/chorus-debian13-root" ]; then
  partial=$root.partial
  rm -rf "$partial"
  started=$(date +%s)
  echo "making a Debian 13 root in $root with debootstrap from $(mirror) (once)" >&2
  # The first stage only: every package of minbase unpacked, none configured. The second stage
  # (dpkg configuring each package) took 14 s here on an idle machine and over a minute beside the
  # tests, and Node needs none of it: its libraries and a shell are there once unpacked.
  if ! debootstrap --foreign --variant=minbase "$suite" "$partial" "$(mirror)" >"$root.log" 2>&1; then
    tail -n 20 "$root.log" >&2
    echo "$0: debootstrap failed (the whole log: $root.log)" >&2
    exit 1
  fi
  # What the second stage would have set up: a /proc to mount on (the first stage leaves a link to
  # the machine's), and the folder the Node binary goes to.
  rm -rf "$partial/debootstrap" "$partial/proc"
  mkdir -p "$partial/proc" "$partial/usr/local/bin"
  # The names the tests and Chorus resolve (localhost) and the machine's resolver.
  cp /etc/hosts "$partial/etc/hosts"
  cp /etc/resolv.conf "$partial/etc/resolv.conf" 2>/dev/null || true
  # Nothing of apt's download cache is needed to run Node.
  rm -rf "$partial/var/cache/apt/archives/"*.deb "$partial/var/lib/apt/lists/"*_Packages
  echo "debootstrap --foreign $suite from $(mirror), $(date -u +%Y-%m-%dT%H:%M:%SZ)" >"$partial/etc/chorus-debian13-root"
  rm -rf "$root"
  mv "$partial" "$root"
  echo "made the Debian 13 root in $(($(date +%s) - started)) s" >&2
fi
if ! cmp -s "$node_binary" "$root/usr/local/bin/node"; then
  cp "$node_binary" "$root/usr/local/bin/node.new"
  mv "$root/usr/local/bin/node.new" "$root/usr/local/bin/node"
fi
mkdir -p "$root$project"
exec 9>&-

# The namespace's mounts are private: nothing propagates back to the machine's.
exec unshare --mount --propagation private sh -c '
  root=$1 project=$2
  shift 2
  mount --bind "$project" "$root$project"
  mount -t proc proc "$root/proc"
  mount --rbind /dev "$root/dev"
  exec chroot "$root" /usr/bin/env PATH=/usr/local/bin:/usr/bin:/bin HOME=/root \
    sh -c "cd \"\$0\" && exec \"\$@\"" "$project" "$@"
' sh "$root" "$project" "$@"

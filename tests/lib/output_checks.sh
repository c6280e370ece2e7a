# What the scripts that check the lab's outputs in real processes share (sourced, not run): a scratch folder
# ($work) removed at exit with the small file system mounted in it, fail() counting failures, and finish().
work=$(mktemp -d)
failures=0
cleanup() {
  if [ -n "${mounted:-}" ]; then umount "$work/small"; fi
  rm -rf "$work"
}
trap cleanup EXIT

fail() {
  echo "FAIL: $*"
  failures=$((failures + 1))
}

# mount_small: a full disk to write to, $work/small (a 64 KiB tmpfs); false where none may be mounted (only as
# root in a container that allows it).
mount_small() {
  mkdir "$work/small"
  mount -t tmpfs -o size=64k tmpfs "$work/small" 2>/dev/null || return 1
  mounted=1
}

# finish SUMMARY: exit 1 with the count of failures, else print SUMMARY (what CTest looks for).
finish() {
  if [ "$failures" -gt 0 ]; then
    echo "$failures failure(s)"
    exit 1
  fi
  echo "$1"
}

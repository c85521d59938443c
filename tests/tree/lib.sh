# Sourced by the tree tests that scan tracked files.

# enter_git_checkout DIR CHECK: cd to DIR; exits 1 with one line naming CHECK unless DIR is a git
# checkout (these checks list the tracked files with git ls-files).
enter_git_checkout() {
  cd "$1" || exit 1
  if ! git rev-parse --is-inside-work-tree >/dev/null 2>&1; then
    echo "error: not a git checkout; the $2 check lists tracked files with git"
    exit 1
  fi
}

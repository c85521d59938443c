#!/usr/bin/env bash
# Fails when a .cpp file or a tests/cli script is listed in no CMakeLists.txt: with explicit
# source lists, a file nobody lists would silently not be built or run.
# A file counts as listed when its path relative to the directory of an enclosing
# CMakeLists.txt appears there as a whole word.
set -uo pipefail
cd "${1:-.}"
if git rev-parse --is-inside-work-tree >/dev/null 2>&1; then
  files=$(git ls-files --cached --others --exclude-standard -- '*.cpp' ':(glob)tests/cli/*.sh')
else
  files=$(find . -path './build*' -prune -o \( -name '*.cpp' -o -path './tests/cli/*.sh' -a ! -path './tests/cli/*/*' \) -print |
          sed 's|^\./||')
fi
missing=0
for file in $files; do
  [ -e "$file" ] || continue
  dir=$(dirname "$file")
  listed=0
  while :; do
    if [ -f "$dir/CMakeLists.txt" ]; then
      rel=${file#"$dir"/}
      [ "$dir" = . ] && rel=$file
      if grep -Fqw -- "$rel" "$dir/CMakeLists.txt"; then
        listed=1
        break
      fi
    fi
    [ "$dir" = . ] && break
    dir=$(dirname "$dir")
  done
  if [ "$listed" = 0 ]; then
    echo "error: $file is listed in no CMakeLists.txt (add it to its folder's source list)"
    missing=$((missing + 1))
  fi
done
count=$(echo "$files" | wc -w)
echo "$count files checked, $missing unlisted"
[ "$missing" = 0 ]

#!/usr/bin/env bash
# Fails when text is built by operator+ instead of {fmt} (docs/hardening.md, "Issue 11 checklist"):
#  - a std::to_string( next to a binary + anywhere in the tracked C++ (tests included);
#  - a string literal or a std::string(...) temporary next to a binary + in the product code (isa, sim, kernels, traces, tools,
#    python/src, bench, fuzz): write fmt::format("... {} ...", x) instead.
# Comments are not scanned and string contents are emptied first; appending (+=) is not a
# concatenation. A file that may keep them gets an allow-list entry below: a path prefix and why.
set -uo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
enter_git_checkout "${1:-.}" concatenation

# path prefix | reason
allowed='
'

product='^(isa|sim|kernels|traces|tools|python/src|bench|fuzz)/'
hits=$(git ls-files -z -- '*.cpp' '*.h' | PRODUCT="$product" xargs -0 perl -0777 -ne '
  my $text = $_;
  # Comments and literals out (newlines kept, so line numbers hold); a string becomes "".
  $text =~ s{(//[^\n]*|/\*.*?\*/|R"([^(\s]*)\(.*?\)\2"|"(?:\\.|[^"\\\n])*"|(?<![\w])'"'"'(?:\\.|[^'"'"'\\\n]){1,8}'"'"')}{
    my $m = $1; my $nl = ($m =~ tr/\n//);
    ($m =~ m{^(//|/\*)} ? "" : $m =~ m{^R?"} ? q{""} : "0") . ("\n" x $nl)
  }gse;
  my $paren = qr{(\((?:[^()]++|(?-1))*\))};
  my @rules = (qr{(?<![+])\+\s*std::to_string\(}, qr{std::to_string$paren\s*\+(?![+=])});
  push @rules, qr{""\s*\)?\s*\+(?![+=])}, qr{(?<![+])\+\s*""}, qr{std::string$paren\s*\+(?![+=])},
    qr{(?<![+])\+\s*std::string\(} if $ARGV =~ /$ENV{PRODUCT}/;
  for my $rule (@rules) {
    while ($text =~ /$rule/g) {
      my $line = 1 + (substr($text, 0, $-[0]) =~ tr/\n//);
      print "$ARGV:$line\n";
    }
  }' | sort -t: -k1,1 -k2,2n -u)

failed=0
while IFS= read -r hit; do
  [ -z "$hit" ] && continue
  file=${hit%%:*}
  ok=0
  while IFS='|' read -r prefix reason; do
    [ -z "$prefix" ] && continue
    case "$file" in "$prefix"*) ok=1 ;; esac
    : "$reason"
  done <<<"$allowed"
  if [ "$ok" = 0 ]; then
    echo "$hit: string built with operator+: $(sed -n "${hit#*:}p" "$file" | sed 's/^ *//')"
    failed=1
  fi
done <<<"$hits"
if [ "$failed" = 1 ]; then
  echo "error: format the text with fmt::format (the message text unchanged), or add an" \
    "allow-list entry with a reason to tests/tree/string_concat.sh"
  exit 1
fi
echo "string concatenation: none outside the allow-list"

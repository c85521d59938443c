#!/usr/bin/env bash
# Lints the trace viewer's page sources: ESLint (Debian eslint, rules in traces/viewer/eslint.json)
# on viewer.js, css-tree (Debian node-css-tree) on viewer.css. Usage: lint_viewer.sh SOURCE_DIR
set -euo pipefail
viewer="$1/traces/viewer"
# Debian's node modules live in /usr/share/nodejs; a node from elsewhere does not search it.
export NODE_PATH="/usr/share/nodejs${NODE_PATH:+:$NODE_PATH}"
cd "$viewer"
# -f compact: the default formatter needs node-chalk and friends, which Debian only recommends.
eslint --no-eslintrc --no-ignore -f compact -c eslint.json viewer.js
node "$1/tests/traces/check_css.js" viewer.css
echo "viewer.js and viewer.css are clean"
